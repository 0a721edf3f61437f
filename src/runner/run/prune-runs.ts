import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import type { RunStatus } from "../../core/events/loopgate-event.js";
import { type GcPolicy, type GcRun, planGc } from "../../core/run/gc-plan.js";
import { runPhase } from "../../core/run/run-phase.js";
import type { EventStore } from "../../store/kernel/event-store.js";
import { removeTree } from "../../workspace/remove-tree.js";
import { pruneDependencies } from "./context/dependencies.js";
import { measure, pruneSnapshots } from "./context/prune-snapshots.js";

/** One run folder `gc` removed (or, with dry-run, would remove). */
export interface PrunedRun {
  run_id: string;
  status: RunStatus | null;
  finished_at: string | null;
  path: string;
  bytes: number;
  files: number;
}

/** What `gc` did: removed folders, kept runs with the reason, folders it does not know. */
export interface PruneResult {
  store: string;
  dry_run: boolean;
  removed: PrunedRun[];
  kept: { run_id: string; why: string }[];
  /** Folders under runs/ that no run of this log names: never removed. */
  unknown_folders: string[];
  /** Shared dependency copies (their digests) that no kept run references, removed (see dependencies.ts). */
  dependencies_removed: string[];
  /** Workspace snapshots (`<key>/<id>`, see prune-snapshots.ts) no run folder left uses, removed. */
  snapshots_removed: { snapshot: string; bytes: number }[];
  /** Snapshot paths left alone for a reason a person should know (an unreadable overlay.json, a symlink). */
  snapshots_left: { path: string; why: string }[];
  freed_bytes: number;
}

/** A run as `gc` plans over it: what planGc needs, its status, and its stream's last revision. */
export type GcRunRow = GcRun & {
  status: RunStatus | null;
  stream: string;
  lastRevision: number;
  /** The digests of the shared dependency copies its run_started recorded. */
  dependencies: string[];
};

/** Every run of the log, read for `gc`. */
export async function listGcRuns(store: EventStore): Promise<GcRunRow[]> {
  const runs: GcRunRow[] = [];
  for (const s of await store.listStreams({ prefix: "run-" })) {
    const events = await store.readStream(s.stream);
    const done = events.findLast((e) => e.type === "run_finished");
    const started = events[0];
    runs.push({
      runId: s.stream.slice(4),
      phase: runPhase(events),
      startedAt: s.firstAt,
      finishedAt: done?.meta.at ?? null,
      status: done?.type === "run_finished" ? done.data.status : null,
      stream: s.stream,
      lastRevision: events.at(-1)?.revision ?? s.lastRevision,
      dependencies:
        started?.type === "run_started" ? (started.data.dependencies ?? []).map((d) => d.digest) : [],
    });
  }
  return runs;
}

/** A run id as newRunId makes it (and as a path segment it cannot escape runs/). */
const SAFE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/**
 * Removes the folders (`<store>/runs/<id>/`: workspace, pristine copy, observations, blobs) of the runs
 * `planGc` lets go; the events stay in the log. A folder that is a symlink or not a folder is left alone.
 */
export async function pruneRuns(o: {
  store: EventStore;
  localDir: string;
  policy: GcPolicy;
  now: Date;
  dryRun: boolean;
}): Promise<PruneResult> {
  const runs = await listGcRuns(o.store);
  const byId = new Map(runs.map((r) => [r.runId, r]));
  const result: PruneResult = {
    store: o.localDir,
    dry_run: o.dryRun,
    removed: [],
    kept: [],
    unknown_folders: [],
    dependencies_removed: [],
    snapshots_removed: [],
    snapshots_left: [],
    freed_bytes: 0,
  };
  const runsDir = join(o.localDir, "runs");
  for (const d of planGc(runs, o.policy, o.now)) {
    const keep = (why: string) => result.kept.push({ run_id: d.runId, why });
    if (!d.remove) {
      keep(d.why);
      continue;
    }
    if (!SAFE_ID.test(d.runId)) {
      keep("its id is not a plain folder name");
      continue;
    }
    const path = join(runsDir, d.runId);
    const st = await lstat(path).catch(() => null);
    if (!st) continue; // already pruned (or never prepared): nothing to free
    if (!st.isDirectory()) {
      keep(`${path} is not a folder (a symlink?); left alone`);
      continue;
    }
    const size = await measure(path);
    if (!o.dryRun) {
      const failed = await removeTree(path).then(
        () => null,
        (e: unknown) => (e instanceof Error ? e.message : String(e)),
      );
      if (failed) {
        keep(`could not be removed (${failed}); part of it may be gone`);
        continue;
      }
    }
    const r = byId.get(d.runId) as GcRunRow;
    result.removed.push({ run_id: d.runId, status: r.status, finished_at: r.finishedAt, path, ...size });
    result.freed_bytes += size.bytes;
  }
  for (const name of (await readdir(runsDir).catch(() => [] as string[])).sort())
    if (!byId.has(name)) result.unknown_folders.push(join(runsDir, name));
  // A copy a kept run names stays (its gates may run again on resume); one only removed runs named may go.
  const kept = new Set(result.kept.map((k) => k.run_id));
  const referenced = new Set(runs.filter((r) => kept.has(r.runId)).flatMap((r) => r.dependencies));
  result.dependencies_removed = await pruneDependencies(o.localDir, referenced, o.now, o.dryRun);
  // After the run folders: one removed here (or, dry, to be) no longer keeps its snapshot.
  const gone = new Set(result.removed.map((r) => r.run_id));
  const snapshots = await pruneSnapshots(o.localDir, o.now, o.dryRun, gone);
  result.snapshots_removed = snapshots.removed;
  result.snapshots_left = snapshots.left;
  for (const s of snapshots.removed) result.freed_bytes += s.bytes;
  return result;
}
