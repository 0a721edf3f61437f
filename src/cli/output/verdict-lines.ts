import type { Envelope } from "../../core/run/envelope.js";
import type { RunFlags } from "../../runner/host/run-flags.js";
import type { StoreLocation } from "../../store/open-store.js";
import { storeFrom } from "./context.js";
import { formatEnvelope } from "./format.js";
import { hintCommand, hintsFor, storeLine } from "./hints.js";
import type { CommandIO } from "./io.js";

/**
 * The envelope on stdout: JSON with --json, else the summary, how to see the audit trail (or resume), and
 * on the last line the store that holds the run. Every hint is a command that runs as printed here.
 */
export function printEnvelope(io: CommandIO, env: Envelope, flags: RunFlags): void {
  if (flags.json) {
    io.out(`${JSON.stringify(env, null, 2)}\n`);
    return;
  }
  io.out(verdictText(env, storeFrom(flags.store)));
}

/**
 * A verdict as people read it (run, verify, resume, status): the summary, the hints, the store.
 * `notResumable` (a loopgate claude run): an interrupted run is not offered `resume`, but this line.
 */
export function verdictText(env: Envelope, where: StoreLocation, notResumable?: string): string {
  const hints = hintsFor(where);
  const interrupted = env.status === "TOOL_FAILURE" && env.reason.startsWith("interrupted (");
  const resume = !interrupted
    ? ""
    : notResumable
      ? `${notResumable}\n`
      : `continue it: ${hintCommand(hints, `resume ${env.run_id}`)}\n`;
  return `${formatEnvelope(env, hints)}\naudit trail: ${hintCommand(hints, `events ${env.run_id}`)}\n${resume}${storeLine(where)}\n`;
}
