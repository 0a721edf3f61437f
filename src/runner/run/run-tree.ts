import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LoopgateEvent } from "../../core/events/loopgate-event.js";
import { InputError } from "../../core/kernel/errors.js";
import type { ContentStore } from "../../store/kernel/content-store.js";
import { FolderContentStore } from "../../store/kernel/folder-content-store.js";
import { BlobStore } from "../../workspace/blob-store.js";
import { copyObservation } from "../../workspace/content-sync.js";
import { ObservationStore } from "../../workspace/observation-store.js";
import { type ContentSource, type WrittenTree, writeObservation } from "../../workspace/write-observation.js";
import { runPaths } from "./context/run-context.js";

/** One workspace observation a run's log names. */
export interface RecordedTree {
  attempt: number;
  phase: "pristine" | "after_builder";
  observation_id: string;
}

/** What `exportRunTree` wrote, and from which observation. */
export interface ExportedTree extends WrittenTree, RecordedTree {
  run_id: string;
  dir: string;
}

/**
 * The observation a run's tree is exported from: the one after attempt `attempt`'s builder, or by
 * default the last the log recorded (the pristine one when no builder's work was observed).
 */
export function recordedTree(
  runId: string,
  events: readonly LoopgateEvent[],
  attempt?: number,
): RecordedTree {
  const trees: RecordedTree[] = [];
  for (const e of events)
    if (e.type === "workspace_observed")
      trees.push({ attempt: e.data.attempt, phase: e.data.phase, observation_id: e.data.observation_id });
  if (attempt === undefined) {
    const last = trees.at(-1);
    if (!last)
      throw new InputError(`run ${runId} recorded no workspace observation: it has no tree to export`);
    return last;
  }
  const after = trees.filter((t) => t.phase === "after_builder");
  const found = after.findLast((t) => t.attempt === attempt);
  if (found) return found;
  throw new InputError(
    `run ${runId} recorded no observation after attempt ${attempt}'s builder; ${after.length ? `it has one after attempt ${[...new Set(after.map((t) => t.attempt))].join(", ")}` : "it observed no builder's work"}`,
    "--attempt",
  );
}

/**
 * Writes a finished (or stopped) run's workspace as its log recorded it into `dest`, whatever the run's
 * layout: every file comes from the run folder's blobs, else its pristine tree (an overlay's shared
 * snapshot or its `pristine/` copy), else the shared store's content, each checked against the
 * recorded hash. The observation is read from the run folder, or from the shared store when the run
 * folder is not on this machine. `localDir` is where the store keeps run folders.
 */
export async function exportRunTree(o: {
  runId: string;
  events: readonly LoopgateEvent[];
  localDir: string;
  shared: ContentStore | null;
  dest: string;
  attempt?: number;
}): Promise<ExportedTree> {
  const tree = recordedTree(o.runId, o.events, o.attempt);
  const pristineId = o.events.find((e) => e.type === "workspace_observed" && e.data.phase === "pristine");
  const runDir = join(o.localDir, "runs", o.runId);
  const here = existsSync(join(runDir, "observations", `${tree.observation_id}.json`));
  if (!here && !o.shared)
    throw new InputError(
      `run ${o.runId}'s folder ${runDir} is gone (\`loopgate gc\` removes finished runs' folders; the events stay): its tree cannot be written`,
    );
  let scratch: string | null = null;
  try {
    let observations = new ObservationStore(join(runDir, "observations"));
    if (!here && o.shared) {
      // The run was driven elsewhere or its folder was pruned: its observation comes from the store.
      scratch = mkdtempSync(join(tmpdir(), "loopgate-export-"));
      await copyObservation(tree.observation_id, o.shared, new FolderContentStore(scratch));
      observations = new ObservationStore(join(scratch, "observations"));
    }
    const obs = await observations.get(tree.observation_id);
    const sources: ContentSource[] = [];
    for (const dir of [join(runDir, "blobs"), ...(scratch ? [join(scratch, "blobs")] : [])]) {
      const blobs = new BlobStore(dir);
      sources.push((e) => (existsSync(blobs.fileOf(e.hash)) ? blobs.fileOf(e.hash) : null));
    }
    if (pristineId?.type === "workspace_observed")
      sources.push(await pristineSource(runDir, pristineId.data.observation_id));
    const shared = o.shared;
    if (shared) sources.push((e) => shared.getBlob(e.hash).catch(() => null));
    const written = await writeObservation(obs, o.dest, sources);
    return { run_id: o.runId, dir: o.dest, ...tree, ...written };
  } finally {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  }
}

/** A file of the run's pristine tree at the entry's path, when pristine recorded that content there. */
async function pristineSource(runDir: string, pristineId: string): Promise<ContentSource> {
  let pristineDir: string;
  let hashes: Map<string, string>;
  try {
    pristineDir = runPaths(runDir).pristineDir;
    const pristine = await new ObservationStore(join(runDir, "observations")).get(pristineId);
    hashes = new Map(pristine.entries.map((e) => [e.path, e.hash]));
  } catch {
    return () => null;
  }
  return (e) => (hashes.get(e.path) === e.hash ? `${pristineDir}/${e.path}` : null);
}
