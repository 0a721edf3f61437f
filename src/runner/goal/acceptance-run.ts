import type { AcceptanceItem } from "../../core/events/goal/goal-events.js";
import type { EventStore } from "../../store/kernel/event-store.js";
import type { LoadedTask } from "../task-source/load-task.js";
import { acceptancePath, goalTaskFile } from "./goal-tasks.js";

/**
 * Acceptance on the goal workspace (shared by `loopgate goal accept` and the acceptance turn of
 * `goal tick`): an item's task (its `path#gate,gate` keeps only those gates) on the revision's tree, run
 * with no builder (the revision is the work). The task is the recorded file at the item's digest, or on a
 * shared store its snapshot written out under `localDir` (see goal-tasks.ts).
 */
export async function acceptanceTask(
  store: EventStore,
  localDir: string,
  goalId: string,
  item: Pick<AcceptanceItem, "ref" | "digest">,
  tree: string,
): Promise<LoadedTask> {
  const gates = item.ref.includes("#") ? item.ref.slice(item.ref.indexOf("#") + 1) : undefined;
  const loaded = await goalTaskFile(store, localDir, goalId, acceptancePath(item.ref), item.digest);
  const keep = gates?.split(",");
  const task = keep
    ? { ...loaded.task, gates: loaded.task.gates.filter((g) => keep.includes(g.id)) }
    : loaded.task;
  return { ...loaded, task, workspace: tree };
}
