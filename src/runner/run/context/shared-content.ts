import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import type { LoopgateEvent } from "../../../core/events/loopgate-event.js";
import type { Observation, ObservedEntry } from "../../../core/observation/observation.js";
import type { ContentStore } from "../../../store/kernel/content-store.js";
import { FolderContentStore } from "../../../store/kernel/folder-content-store.js";
import { copyObservation } from "../../../workspace/content-sync.js";
import { mkdirPrivate } from "../../../workspace/private-modes.js";
import type { RunContext } from "./run-context.js";

/**
 * Keeps an observation before its id is recorded: in the run folder (`observations/`, and the blobs of
 * its files read from `root`), and, when the store is shared beyond this machine, in the store's
 * ContentStore too (only the blobs it lacks are sent; the observation is written last). So every
 * observation id the log names is held by the store with all its blobs, and a worker elsewhere can
 * rebuild the run folder from the store alone (rebuildRunFolder).
 */
export async function keepObservation(
  ctx: RunContext,
  obs: Observation,
  root: string,
  /** The files whose blobs are needed, when not all are (an overlay's changed files: workspace-layout.ts). */
  files?: readonly ObservedEntry[],
): Promise<void> {
  await ctx.observations.put(obs);
  // A shared store is sent every blob of the observation, so every one is kept then.
  await ctx.blobs.save(files && !ctx.shared ? { id: obs.id, entries: [...files] } : obs, root);
  if (ctx.shared) await copyObservation(obs.id, new FolderContentStore(ctx.runDir), ctx.shared);
}

/** Every observation id a run's log names (the pristine one first), each once. */
export function observationIdsOf(events: readonly LoopgateEvent[]): string[] {
  const ids = new Set<string>();
  for (const e of events) {
    const id = (e.data as { observation_id?: unknown } | null)?.observation_id;
    if (typeof id === "string") ids.add(id);
  }
  return [...ids];
}

/**
 * Rebuilds a run folder that is not on this machine (the run was driven elsewhere, or its folder was
 * removed) from the shared store: every observation the log names and their blobs are copied into the
 * folder, then `pristine/` is rolled to the pristine observation and `workspace/` to `lastObservation`,
 * the last one the log recorded (what happened after it on the dead machine is in doubt, as in any
 * resume). Returns what it did, for the run_resumed action.
 */
export async function rebuildRunFolder(
  ctx: RunContext,
  shared: ContentStore,
  events: readonly LoopgateEvent[],
  pristineObservation: string,
  lastObservation: string,
): Promise<string> {
  mkdirPrivate(ctx.runDir, { parentToo: true });
  const local = new FolderContentStore(ctx.runDir);
  let blobs = 0;
  const ids = observationIdsOf(events);
  for (const id of ids) blobs += (await copyObservation(id, shared, local)).blobsCopied;
  await mkdir(ctx.pristineDir, { recursive: true });
  await ctx.blobs.restore(await ctx.observations.get(pristineObservation), ctx.pristineDir);
  await mkdir(ctx.workspace, { recursive: true });
  await ctx.blobs.restore(await ctx.observations.get(lastObservation), ctx.workspace);
  return `rebuilt the run folder ${ctx.runDir} from the store (${ids.length} observation(s), ${blobs} blob(s)), its workspace at observation ${lastObservation.slice(0, 12)}`;
}

/** True when the run folder's workspace is on this machine. */
export function runFolderPresent(ctx: RunContext): boolean {
  return existsSync(ctx.workspace) && existsSync(ctx.pristineDir);
}
