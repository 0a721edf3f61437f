import { createHash } from "node:crypto";
import { LoopgateError } from "../../core/kernel/errors.js";
import { TASK_SNAPSHOT_LIMITS, TaskSnapshotManifest } from "../../core/task/task-snapshot.js";
import { ContentMissingError, type ContentStore } from "../../store/kernel/content-store.js";
import type { EventStore } from "../../store/kernel/event-store.js";
import { type LoadedTask, loadTask } from "../task-source/load-task.js";
import { materializeTask, snapshotTask } from "../task-source/snapshot-store.js";

/**
 * The task files a goal names (its todos' tasks, its acceptance items' tasks), on a shared store
 * (PostgreSQL): each is snapshotted into the store's content (snapshotTask: the task folder and everything
 * it names, content-addressed) when the goal stream records it, under a goal task record keyed by the
 * goal, the recorded path and the task file's digest. A host without the recorded path (a worker on
 * another machine) writes the snapshot out under its own folder (`<its folder>/tasks/<manifest>/`,
 * beside its run folders, never inside a workspace) and loads it from there. On a folder store nothing
 * changes: the recorded path is the only copy.
 */

/** The record naming a goal task's snapshot; it lists the snapshot's blobs so gc keeps them (it keeps what any kept record names). */
interface GoalTaskRecord {
  kind: "loopgate_goal_task";
  goal_id: string;
  path: string;
  digest: string;
  manifest: string;
  blobs: string[];
}

/** The content key of the record of `path` at `digest` in goal `goalId` (a namespaced sha256, as content keys are). */
export const goalTaskKey = (goalId: string, path: string, digest: string) =>
  createHash("sha256").update(`loopgate-goal-task\0${goalId}\0${path}\0${digest}`).digest("hex");

/** A goal's task file that cannot be used here: changed since it was recorded, or missing with no snapshot. */
export class GoalTaskError extends LoopgateError {
  constructor(
    readonly why: "changed" | "missing",
    message: string,
  ) {
    super(why === "changed" ? "task_file_changed" : "task_file_invalid", message);
  }
}

async function readRecord(content: ContentStore, key: string): Promise<GoalTaskRecord | null> {
  try {
    return JSON.parse(await content.getObservation(key)) as GoalTaskRecord;
  } catch (e) {
    if (e instanceof ContentMissingError) return null;
    throw e;
  }
}

/**
 * Snapshots `loaded` (the file recorded as `path`, at `digest`) into the shared store once; a record
 * already held is kept (the first snapshot of a path at a digest is the one every host uses).
 */
async function storeSnapshot(
  content: ContentStore,
  goalId: string,
  path: string,
  loaded: LoadedTask,
  limits: { bytes: number; paths: number } = TASK_SNAPSHOT_LIMITS,
): Promise<void> {
  const key = goalTaskKey(goalId, path, loaded.digest);
  if (await readRecord(content, key)) return;
  const ref = await snapshotTask(loaded, content, limits);
  const manifest = TaskSnapshotManifest.parse(
    JSON.parse((await content.getBlob(ref.manifest)).toString("utf8")),
  );
  const blobs = [...new Set(manifest.entries.flatMap((e) => (e.type === "file" ? [e.hash] : [])))].sort();
  const rec: GoalTaskRecord = {
    kind: "loopgate_goal_task",
    goal_id: goalId,
    path,
    digest: loaded.digest,
    manifest: ref.manifest,
    blobs,
  };
  try {
    await content.putObservation(key, JSON.stringify(rec));
  } catch (e) {
    // Another host stored its snapshot of the same file first (other mtimes, same task): theirs is kept.
    if (!(await readRecord(content, key))) throw e;
  }
}

/** The task file paths (and the digests they were recorded at) that goal-stream event bodies name. */
export function goalTaskRefs(
  bodies: readonly { type: string; data: unknown }[],
): { path: string; digest: string }[] {
  const out: { path: string; digest: string }[] = [];
  for (const b of bodies) {
    const d = b.data as Record<string, unknown> | null;
    if (!d) continue;
    if (b.type === "todo_added") {
      const task = (d.todo as { task?: { path: string; digest: string } } | undefined)?.task;
      if (task) out.push({ path: task.path, digest: task.digest });
    } else if (b.type === "goal_created" || b.type === "goal_acceptance_changed") {
      for (const a of (d.acceptance as { kind: string; ref: string; digest: string }[] | undefined) ?? [])
        if (a.kind === "task") out.push({ path: acceptancePath(a.ref), digest: a.digest });
    }
  }
  return out;
}

/** The task file of an acceptance item's ref (`path` or `path#gate,gate`). */
export const acceptancePath = (ref: string) => ref.split("#")[0] as string;

/**
 * Before the goal stream records events naming task files: on a shared store, every one of them that is
 * present here at its recorded digest is snapshotted into the store (so the append never names a task
 * the store cannot give another host). A file absent here, or changed, is left alone: the goal's health
 * names it; a task over the snapshot limits is an InputError (the write is refused, as `submit` refuses
 * it). Nothing happens on a folder store.
 */
export async function snapshotGoalTasks(
  store: EventStore,
  goalId: string,
  bodies: readonly { type: string; data: unknown }[],
  limits: { bytes: number; paths: number } = TASK_SNAPSHOT_LIMITS,
): Promise<void> {
  const content = store.content?.();
  if (!content) return;
  for (const { path, digest } of goalTaskRefs(bodies)) {
    let loaded: LoadedTask;
    try {
      loaded = loadTask(path);
    } catch {
      continue;
    }
    if (loaded.digest === digest) await storeSnapshot(content, goalId, path, loaded, limits);
  }
}

type Located = { local: LoadedTask } | { content: ContentStore; rec: GoalTaskRecord };

/** Where the goal task recorded as `path` at `digest` is to be had: here, or as a snapshot in the store. */
async function locate(store: EventStore, goalId: string, path: string, digest: string): Promise<Located> {
  const content = store.content?.();
  let local: LoadedTask | null = null;
  let why = "";
  try {
    local = loadTask(path);
  } catch (e) {
    why = (e as Error).message.split("\n")[0] ?? "";
  }
  if (local && local.digest === digest) return { local };
  const rec = content ? await readRecord(content, goalTaskKey(goalId, path, digest)) : null;
  if (content && rec) return { content, rec };
  if (local)
    throw new GoalTaskError(
      "changed",
      `the task file ${path} changed since it was recorded (digest ${local.digest.slice(0, 12)}, recorded ${digest.slice(0, 12)})${content ? "; the store holds no snapshot of the recorded one" : ""}`,
    );
  throw new GoalTaskError(
    "missing",
    `the task file is missing or invalid: ${why}${content ? ` (and the store holds no snapshot of ${path} at digest ${digest.slice(0, 12)}: it was recorded on a host without it, or before goal tasks were kept in the store; run a command of this goal where the file is)` : ""}`,
  );
}

/** The goal's health check: GoalTaskError unless the task is here unchanged or its snapshot is in the store (nothing is written). */
export async function checkGoalTask(
  store: EventStore,
  goalId: string,
  path: string,
  digest: string,
): Promise<void> {
  await locate(store, goalId, path, digest);
}

/**
 * The goal task recorded as `path` at `digest`, loaded on this host: the recorded path when it exists
 * here with that digest (on a shared store, snapshotted first if the store lacks it: a goal recorded
 * before its tasks were kept in the store gets them from the first host that runs it), else — on a
 * shared store — its snapshot written out under `localDir/tasks/<manifest>/` (held-out files there stay
 * out of every workspace, as a worker's task snapshots do). A folder store has only the recorded path.
 * GoalTaskError says what is wrong: changed, or missing with no snapshot.
 */
export async function goalTaskFile(
  store: EventStore,
  localDir: string,
  goalId: string,
  path: string,
  digest: string,
): Promise<LoadedTask> {
  const at = await locate(store, goalId, path, digest);
  if ("rec" in at) return materializeTask(at.content, at.rec.manifest, localDir, digest);
  const content = store.content?.();
  if (content) await storeSnapshot(content, goalId, path, at.local);
  return at.local;
}
