import type { RunFlags } from "../../runner/host/run-flags.js";
import type { RunReporter } from "../../runner/run/context/reporter.js";
import type { StoreLocation } from "../../store/open-store.js";
import { hintsFor } from "./hints.js";
import type { CommandIO } from "./io.js";
import { progressReporter } from "./progress.js";

/** Whether the user asked for the builder's and gates' output live (`--verbose` or `--follow`). */
export const followOutput = (flags: RunFlags) => Boolean(flags.verbose || flags.follow);

/** What a run reports to as it goes, and how to stop it (the progress owns a timer). */
export interface ShownRun {
  reporter?: RunReporter;
  close(): void;
}

/**
 * How a run shows itself on stderr as it goes: its progress (with --json only on a terminal, or when asked
 * for with --verbose), else only its warnings and notes; nothing at all when `quiet`.
 */
export function runReporter(io: CommandIO, flags: RunFlags, where: StoreLocation, quiet?: boolean): ShownRun {
  if (quiet) return { close: () => undefined };
  if (!flags.json || io.stderr.isTTY || followOutput(flags)) {
    const progress = progressReporter(io.stderr, { verbose: followOutput(flags), hints: hintsFor(where) });
    return { reporter: progress, close: () => progress.close() };
  }
  return {
    reporter: {
      warning: (t: string) => io.err(`warning: ${t}\n`),
      note: (t: string) => io.err(`note: ${t}\n`),
    },
    close: () => undefined,
  };
}
