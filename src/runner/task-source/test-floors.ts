import { randomUUID } from "node:crypto";
import { type EventData, type LoopgateEvent, streamOf } from "../../core/events/loopgate-event.js";
import type { Envelope } from "../../core/run/envelope.js";
import { isSubprocessGate } from "../../core/task/task.js";
import type { TestFloor } from "../../gates/tamper/test-report.js";
import type { EventStore } from "../../store/kernel/event-store.js";
import type { LoadedTask } from "./load-task.js";

/** The stream that holds `loopgate task check`'s records for one task. */
export function taskCheckStream(taskId: string): string {
  return `task-check-${taskId}`;
}

/** The latest task check recorded for this exact task file (same digest), or null. */
export async function recordedTaskCheck(
  store: EventStore,
  loaded: LoadedTask,
): Promise<EventData<"task_checked"> | null> {
  const events = streamOf("task-check", await store.readStream(taskCheckStream(loaded.task.id)));
  return events.findLast((e) => e.data.task_digest === loaded.digest)?.data ?? null;
}

/**
 * The test floor of every subprocess gate: `min_tests` when the task declares it, else the count the
 * oracle reached in `loopgate task check` on this task file, else 1. Fixed when a run starts.
 */
export async function testFloorsFor(
  store: EventStore,
  loaded: LoadedTask,
  options: { useTaskCheck: boolean },
): Promise<Record<string, TestFloor>> {
  const checked = options.useTaskCheck ? await recordedTaskCheck(store, loaded) : null;
  const floors: Record<string, TestFloor> = {};
  for (const g of loaded.task.gates) {
    if (!isSubprocessGate(g)) continue;
    const seen = checked?.gates.find((x) => x.gate_id === g.id)?.tests_passed ?? null;
    floors[g.id] =
      g.min_tests !== undefined
        ? { min: g.min_tests, source: "declared" }
        : seen !== null && seen > 0
          ? { min: seen, source: "task_check" }
          : { min: 1, source: "default" };
  }
  return floors;
}

/** Records what the oracle's SUCCESS run counted, so later runs of this task file hold to it. */
export async function recordTaskCheck(
  store: EventStore,
  loaded: LoadedTask,
  oracle: Envelope,
  now: Date,
): Promise<EventData<"task_checked">> {
  const data: EventData<"task_checked"> = {
    task_id: loaded.task.id,
    task_digest: loaded.digest,
    oracle_run_id: oracle.run_id,
    gates: loaded.task.gates.filter(isSubprocessGate).map((g) => {
      const run = oracle.gates.findLast((x) => x.id === g.id);
      return { gate_id: g.id, tests_passed: run?.tamper?.tests?.passed ?? null };
    }),
  };
  const event = {
    id: randomUUID(),
    type: "task_checked",
    data,
    meta: { at: now.toISOString(), origin: "runtime" },
  } as LoopgateEvent;
  await store.append(taskCheckStream(loaded.task.id), [event], "any");
  return data;
}
