import type { Observation, ObservedEntry } from "../../../core/observation/observation.js";
import { WorkspaceObserver, type WorkspaceObserverOptions } from "../../../workspace/observer.js";
import { OverlayObserver } from "../../../workspace/overlay-observer.js";
import { attachOverlay, discardUpper, overlayOf } from "../../../workspace/overlay-workspace.js";
import type { RunContext } from "./run-context.js";
import { pristineId } from "./run-log.js";

const pristineReads = new WeakMap<RunContext, { id: string; observation: Promise<Observation> }>();

/**
 * The run's pristine observation, read and parsed once per run: it never changes while the run lives,
 * and the observer, the observation phase and each attempt's gates all start from it (on an overlay
 * it is the snapshot's whole tree). A failed read is not kept.
 */
export function pristineObservation(
  ctx: RunContext,
  id: string = pristineId(ctx.journal.current),
): Promise<Observation> {
  const kept = pristineReads.get(ctx);
  if (kept?.id === id) return kept.observation;
  const observation = ctx.observations.get(id);
  observation.catch(() => {
    if (pristineReads.get(ctx)?.observation === observation) pristineReads.delete(ctx);
  });
  pristineReads.set(ctx, { id, observation });
  return observation;
}

/**
 * The observer of a run's workspace: over its overlay's upper layer (O(changes)) when the run has
 * one, else a walk of its copy. Both give the same observation of the same tree.
 */
export async function runObserver(
  ctx: RunContext,
  options: WorkspaceObserverOptions = {},
): Promise<WorkspaceObserver> {
  const o = overlayOf(ctx.runDir);
  if (!o) return new WorkspaceObserver(ctx.workspace, options);
  return new OverlayObserver(o.merged, o.upper, await pristineObservation(ctx, o.pristineId), options);
}

/**
 * The files whose blobs an observation needs kept: on an overlay, only those the upper layer holds
 * (every other file is the snapshot's, which never changes and is where a rollback finds it); else all.
 */
export function filesToKeep(observer: WorkspaceObserver): readonly ObservedEntry[] | undefined {
  return observer instanceof OverlayObserver ? observer.lastChanged : undefined;
}

/**
 * Rolls the run's workspace back to a recorded observation. On an overlay the upper layer is
 * discarded (the workspace is pristine again, at the cost of what was changed) and only what the
 * observation holds beyond pristine is written back from the run's blobs; a copy is restored path by path.
 */
export async function rollbackWorkspace(ctx: RunContext, observationId: string): Promise<void> {
  const target = await ctx.observations.get(observationId);
  const o = overlayOf(ctx.runDir);
  if (!o) {
    await ctx.blobs.restore(target, ctx.workspace);
    return;
  }
  await discardUpper(o);
  if (observationId === o.pristineId) return;
  await ctx.blobs.restore(target, ctx.workspace, await ctx.observations.get(o.pristineId));
}

/**
 * Mounts a resumed run's overlay again when it is not mounted (the machine restarted, or the run had
 * finished), and points the run's pristine tree at the overlay's lower layer, as prepareRun did; nothing
 * for a copy. Call before anything reads the workspace or the pristine tree.
 */
export function attachWorkspace(ctx: RunContext): void {
  const o = overlayOf(ctx.runDir);
  if (!o) return;
  attachOverlay(o);
  ctx.pristineDir = o.lower;
}
