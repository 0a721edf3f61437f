import type { LoopgateEvent } from "../events/loopgate-event.js";

/**
 * Where a run's log says it is: `running` (no verdict yet: it is being driven, or it crashed and can be
 * resumed), `interrupted` (a signal stopped it; its verdict is TOOL_FAILURE "interrupted (…)" and its
 * folder may still be needed to continue it), or `finished` (a final verdict). Derived from the log only.
 */
export type RunPhase = "running" | "interrupted" | "finished";

/** The reason the runner records when a signal stops a run (run-driver.ts). */
const INTERRUPTED = /^interrupted \(/;

/** The phase of a run from its events. */
export function runPhase(events: readonly LoopgateEvent[]): RunPhase {
  const done = events.findLast((e) => e.type === "run_finished");
  if (done?.type !== "run_finished") return "running";
  return done.data.status === "TOOL_FAILURE" && INTERRUPTED.test(done.data.reason)
    ? "interrupted"
    : "finished";
}
