import { createHash } from "node:crypto";
import type { LoopgateEvent } from "../../core/events/loopgate-event.js";
import { LoopgateError, RunNotFoundError } from "../../core/kernel/errors.js";
import { type Envelope, projectEnvelope } from "../../core/run/envelope.js";
import type { EventStore } from "../../store/kernel/event-store.js";
import { RunJournal } from "../stream/run-journal.js";

/** A validation receipt as the goal stream records it (core/goal's ValidationReceipt). */
export interface RunReceipt {
  run_id: string;
  task_id: string;
  task_digest: string;
  status: "SUCCESS" | "ESCALATED" | "TOOL_FAILURE";
  envelope_digest: string;
  goal_id: string;
  goal_revision: string;
}

/** Evidence that cannot be read as a goal run's receipt: the run is missing, unfinished or no goal's. */
export class EvidenceError extends LoopgateError {
  constructor(message: string) {
    super("evidence_refused", message);
  }
}

/**
 * Reads a run from the log and derives its receipt: which task (file and digest), which goal and
 * goal-workspace revision it started from, its verdict, and the digest of its envelope. Only loopgate's
 * own records count: the envelope is rebuilt from the run's events, never taken from the caller.
 */
export async function receiptOfRun(
  store: EventStore,
  localDir: string,
  runId: string,
): Promise<{ receipt: RunReceipt; taskPath: string }> {
  return receiptOfLog(runId, await store.readStream(RunJournal.stream(runId)), localDir);
}

/** `receiptOfRun` of a run's log already read (its envelope too, when projected already). */
export function receiptOfLog(
  runId: string,
  events: readonly LoopgateEvent[],
  localDir: string,
  projected?: Envelope | null,
): { receipt: RunReceipt; taskPath: string } {
  if (events.length === 0) throw new RunNotFoundError(runId, localDir);
  const started = events[0];
  if (started?.type !== "run_started")
    throw new EvidenceError(`run ${runId} does not begin with run_started`);
  const goal = started.data.goal;
  if (!goal)
    throw new EvidenceError(
      `run ${runId} did not run on a goal workspace, so it proves nothing about a goal; run the todo's task with the todo run command (it records the goal workspace's revision)`,
    );
  const envelope = projected === undefined ? projectEnvelope(runId, events) : projected;
  if (!envelope)
    throw new EvidenceError(`run ${runId} has not finished; only a finished run's verdict is evidence`);
  const envelope_digest = createHash("sha256").update(JSON.stringify(envelope)).digest("hex");
  return {
    receipt: {
      run_id: runId,
      task_id: started.data.task_id,
      task_digest: started.data.task_digest,
      status: envelope.status,
      envelope_digest,
      goal_id: goal.id,
      goal_revision: goal.revision,
    },
    taskPath: started.data.task_path,
  };
}
