import { join } from "node:path";
import type { LoopgateEvent } from "../../../core/events/loopgate-event.js";
import { InfrastructureError } from "../../../core/kernel/errors.js";
import { changePlanDigest, changePlanMismatch } from "../../../core/observation/gate-change-digest.js";
import { planGateChanges } from "../../../core/observation/gate-change-plan.js";
import type { ObservedEntry } from "../../../core/observation/observation.js";
import { gateChangeRules } from "../../../core/task/task.js";
import type { EventStore } from "../../../store/kernel/event-store.js";
import { FolderContentStore } from "../../../store/kernel/folder-content-store.js";
import { BlobStore } from "../../../workspace/blob-store.js";
import { copyObservation } from "../../../workspace/content-sync.js";
import { ObservationStore } from "../../../workspace/observation-store.js";
import { RunJournal } from "../../stream/run-journal.js";
import type { LoadedTask } from "../../task-source/load-task.js";

/** What a run's gates saw change: entries carried from its workspace, pristine paths dropped. */
export interface AcceptedChange {
  carry: ObservedEntry[];
  drop: string[];
  /** Where the run keeps a file's content by its hash. */
  blobPath(hash: string): string;
  /** Why nothing may be written: the plan recomputed is not the one the run's gates recorded. */
  refusal?: string;
}

/**
 * The accepted change of a finished run: the gate-change plan of its last attempt (pristine → the
 * observation after the builder, by the task's deliverables and protected paths), exactly what its gates
 * were built from, with the file contents the run stored by hash.
 */
export async function acceptedChange(
  store: EventStore,
  runId: string,
  loaded: LoadedTask,
  localDir: string,
  /** The run's events when the caller has read them already. */
  read?: readonly LoopgateEvent[],
): Promise<AcceptedChange> {
  const events = read ?? (await store.readStream(RunJournal.stream(runId)));
  const started = events[0];
  if (started?.type !== "run_started") throw new InfrastructureError(`run ${runId} has no run_started`);
  let runDir = started.data.run_dir;
  let pristine: string | null = null;
  let after: string | null = null;
  let afterAttempt = 0;
  for (const e of events)
    if (e.type === "workspace_observed") {
      if (e.data.phase === "pristine") pristine = e.data.observation_id;
      else [after, afterAttempt] = [e.data.observation_id, e.data.attempt];
    }
  if (!pristine || !after)
    throw new InfrastructureError(`run ${runId} recorded no pristine and after-builder observation`);
  const shared = store.content?.();
  if (shared) {
    // A shared store: the run may have been driven on another machine, so its two observations and
    // their blobs come from the store into this host's own run folder (never another host's files).
    runDir = join(localDir, "runs", runId);
    const local = new FolderContentStore(runDir);
    for (const id of [pristine, after]) await copyObservation(id, shared, local);
  }
  const observations = new ObservationStore(join(runDir, "observations"));
  const plan = planGateChanges(
    await observations.get(pristine),
    await observations.get(after),
    gateChangeRules(loaded.task),
  );
  // The gates of that attempt recorded the plan they were built from: the writeback must be that plan.
  const gates = events.flatMap((e) =>
    e.type === "gate_run_finished" && e.data.attempt === afterAttempt ? [e.data] : [],
  );
  const refusal = changePlanMismatch(gates, changePlanDigest(plan));
  const blobs = new BlobStore(join(runDir, "blobs"));
  return {
    carry: plan.carry,
    drop: plan.drop,
    blobPath: (h) => blobs.fileOf(h),
    ...(refusal ? { refusal } : {}),
  };
}
