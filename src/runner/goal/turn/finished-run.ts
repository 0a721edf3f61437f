import { projectEnvelope } from "../../../core/run/envelope.js";
import { RunJournal } from "../../stream/run-journal.js";
import type { RunLog, TickCtx } from "./tick-context.js";

/**
 * A run's log, read from the store and projected once per tick once the run has finished: the typed
 * result, the validation receipt, the writeback's accepted change and the spend all read the same
 * finished run, whose verdict and facts never change. An unfinished run is read again each time (it may
 * be resumed meanwhile), and a run the tick drives again is forgotten first (see `forgetRun`).
 */
export async function runLog(ctx: TickCtx, runId: string): Promise<RunLog> {
  const kept = ctx.runs.get(runId);
  if (kept) return kept;
  const events = await ctx.deps.store.readStream(RunJournal.stream(runId));
  const log: RunLog = { events, envelope: events.length === 0 ? null : projectEnvelope(runId, events) };
  if (log.envelope) ctx.runs.set(runId, log);
  return log;
}

/** The tick is about to drive `runId` (start or resume it): what it read of it before is stale. */
export function forgetRun(ctx: TickCtx, runId: string): void {
  ctx.runs.delete(runId);
}
