import { EXIT_INTERRUPTED } from "./exit-codes.js";
import type { CommandIO } from "./io.js";

/** How long after the first interrupt a repeat counts as the same key press. */
export const SAME_PRESS_MS = 1000;

/**
 * Ctrl-C and SIGTERM for a command that records its runs: the first signal aborts `signal` (the run
 * stops and is recorded as interrupted); a second one, pressed later, quits at once with 130. A repeat
 * within SAME_PRESS_MS is the same press delivered twice — a terminal signals the whole process group,
 * and `npx`/`npm exec` forwards the signal it got to its child as well — so it is ignored.
 */
export function handleInterrupts(
  onFirst: (sig: NodeJS.Signals) => void,
  now: () => number = Date.now,
): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  let first = 0;
  const onSignal = (sig: NodeJS.Signals) => {
    if (controller.signal.aborted) {
      if (now() - first >= SAME_PRESS_MS) process.exit(EXIT_INTERRUPTED);
      return;
    }
    first = now();
    onFirst(sig);
    controller.abort(sig);
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return {
    signal: controller.signal,
    dispose() {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    },
  };
}

/** The interrupt handling of a command that drives a run (`run`, `verify`, `task check`, `resume`). */
export function interruptRun(io: Pick<CommandIO, "err">): { signal: AbortSignal; dispose(): void } {
  return handleInterrupts((sig) =>
    io.err(`\nloopgate: ${sig}: stopping the run and recording it (press again to quit at once)\n`),
  );
}
