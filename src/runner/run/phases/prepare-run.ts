import { copyFileSync, existsSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { InfrastructureError } from "../../../core/kernel/errors.js";
import { describeUncovered, uncoveredProtected } from "../../../core/observation/glob-coverage.js";
import type { Observation } from "../../../core/observation/observation.js";
import type { Envelope } from "../../../core/run/envelope.js";
import { type SandboxMode, sandboxSelfTest } from "../../../sandbox/bubblewrap.js";
import { sandboxedAs } from "../../../sandbox/sandbox-user.js";
import { copyTree } from "../../../workspace/copy-tree.js";
import { WorkspaceObserver } from "../../../workspace/observer.js";
import { OverlayMountError } from "../../../workspace/overlay-mount.js";
import {
  chooseWorkspaceMode,
  createOverlay,
  noteOverlayRefused,
} from "../../../workspace/overlay-workspace.js";
import { mkdirPrivate } from "../../../workspace/private-modes.js";
import { removeTree } from "../../../workspace/remove-tree.js";
import { withoutDependencyFiles } from "../context/dependencies.js";
import { pristineSnapshot } from "../context/pristine-snapshot.js";
import { failRun, type RunContext } from "../context/run-context.js";
import { keepObservation } from "../context/shared-content.js";

let selfTestPassed = false;

/** Proves the sandbox once per process before anything relies on it. */
export async function ensureSandbox(mode: SandboxMode): Promise<void> {
  if (mode === "bubblewrap" && !selfTestPassed) {
    await sandboxSelfTest();
    selfTestPassed = true;
  }
}

/**
 * Makes the pristine tree and the run workspace — two copies, or an overlay on the task's shared
 * snapshot (overlay-workspace.ts chooses) — and records the pristine observation; null when all went well.
 */
export async function prepareRun(ctx: RunContext): Promise<Envelope | null> {
  const { loaded, journal, runDir } = ctx;
  try {
    await ensureSandbox(ctx.sandbox);
    if (!existsSync(loaded.workspace))
      throw new InfrastructureError(`the task workspace ${loaded.workspace} is missing`);
    if (ctx.workFrom && !existsSync(ctx.workFrom))
      throw new InfrastructureError(`the workspace ${ctx.workFrom} is missing`);
    // A resumed preparation starts over: nothing half-copied may count as pristine.
    await removeTree(runDir);
    // 0700, and the store's runs/ folder too: what a builder leaves here is no other local user's to reach.
    mkdirPrivate(runDir, { parentToo: true });
    // A copy's pristine tree is the run's own (a resumed run's may have pointed at an overlay's snapshot).
    ctx.pristineDir = join(runDir, "pristine");
    // A shared dependency folder is copied as its empty mount point only: its files are mounted, never copied.
    const filter = withoutDependencyFiles(ctx.dependencies.map((d) => d.path));
    // `verify` checks work that is already whole: there is nothing for an overlay to save.
    const choice = ctx.workFrom ? null : chooseWorkspaceMode(dirname(runDir));
    // Who sandboxed code runs as: what the builder will write is made theirs as it is written.
    const owner = sandboxedAs(ctx.sandbox);
    const t0 = performance.now();
    let pristine: Observation | null = null;
    if (choice?.mode === "overlay") {
      try {
        pristine = await overlayWorkspace(ctx, filter, owner);
        // Said only when forced: an overlay chosen here changes nothing a user sees.
        if (!choice.fallback) ctx.reporter.note?.(`workspace: overlay (${choice.why})`);
      } catch (e) {
        // Only the mount's refusal: anything else (the task's workspace unreadable, a full disk) is the run's.
        if (!choice.fallback || !(e instanceof OverlayMountError)) throw e;
        // Chosen, not forced: the run copies instead, from a clean folder, and says why, once per store.
        await removeTree(runDir);
        mkdirPrivate(runDir, { parentToo: true });
        noteOverlayRefused(dirname(runDir), (e as Error).message);
        ctx.reporter.note?.(`workspace: copy (an overlay could not be made: ${(e as Error).message})`);
      }
    }
    if (!pristine) {
      await copyTree(loaded.workspace, ctx.pristineDir, { filter });
      await copyTree(ctx.workFrom ?? loaded.workspace, ctx.workspace, { filter, owner });
      // Work checked with `verify` may come without the folder: the mount point is the task's, not the work's.
      for (const d of ctx.dependencies) mkdirSync(join(ctx.workspace, d.path), { recursive: true });
      pristine = await new WorkspaceObserver(ctx.pristineDir).observe();
      // Beside a shared store the pristine files go there too, so a worker elsewhere can rebuild pristine/.
      if (ctx.shared) await keepObservation(ctx, pristine, ctx.pristineDir);
      else await ctx.observations.put(pristine);
    }
    const paths = pristine.entries.map((e) => e.path);
    for (const u of uncoveredProtected(loaded.task.protected, paths))
      ctx.reporter.warning?.(describeUncovered(u, loaded.task.workspace));
    await journal.record({
      type: "record_observation",
      data: {
        attempt: 0,
        phase: "pristine",
        observation_id: pristine.id,
        entries: pristine.entries.length,
        duration_ms: Math.round(performance.now() - t0),
      },
    });
  } catch (e) {
    return failRun(
      ctx,
      e instanceof InfrastructureError ? e.message : `preparing the run failed: ${String(e)}`,
    );
  }
  return null;
}

/** The task's shared snapshot and the run's overlay on it; returns the pristine observation (the snapshot's). */
async function overlayWorkspace(
  ctx: RunContext,
  filter: ReturnType<typeof withoutDependencyFiles>,
  owner: ReturnType<typeof sandboxedAs>,
): Promise<Observation> {
  const { runDir } = ctx;
  const localDir = dirname(dirname(runDir));
  const deps = ctx.dependencies.map((d) => d.path);
  const snap = await pristineSnapshot(localDir, ctx.loaded.workspace, deps, filter, owner);
  const pristine = snap.observation;
  // The pristine observation is the snapshot's, linked in whole: nothing to walk or hash per run.
  mkdirSync(join(runDir, "observations"), { recursive: true });
  copyFileSync(snap.observationFile, join(runDir, "observations", `${pristine.id}.json`));
  createOverlay(runDir, snap.tree, pristine.id);
  ctx.pristineDir = snap.tree;
  if (ctx.shared) await keepObservation(ctx, pristine, ctx.pristineDir);
  return pristine;
}
