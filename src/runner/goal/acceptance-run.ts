import type { AcceptanceItem } from "../../core/goal/index.js";
import { type LoadedTask, loadTask } from "../load-task.js";

/**
 * Acceptance on the goal workspace (shared by `loopgate goal accept` and the acceptance turn of
 * `goal tick`): an item's task (its `path#gate,gate` keeps only those gates) on the revision's tree, run
 * with no builder (the revision is the work),.
 */
export function acceptanceTask(item: Pick<AcceptanceItem, "ref">, tree: string): LoadedTask {
  const [path, gates] = item.ref.split("#") as [string, string | undefined];
  const loaded = loadTask(path);
  const keep = gates?.split(",");
  const task = keep
    ? { ...loaded.task, gates: loaded.task.gates.filter((g) => keep.includes(g.id)) }
    : loaded.task;
  return { ...loaded, task, workspace: tree };
}
