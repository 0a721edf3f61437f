import { existsSync } from "node:fs";
import { join } from "node:path";
import { readRun } from "../../src/cli/output/context.js";
import { locateStore } from "../../src/cli/output/store-location.js";
import { exportRunTree } from "../../src/runner/run/run-tree.js";
import { openStore } from "../../src/store/open-store.js";
import { attachOverlay, detachOverlay, overlayOf } from "../../src/workspace/overlay-workspace.js";

/**
 * A finished run's workspace as its log recorded it, written by `loopgate export`'s code into
 * `<localDir>/exports/<run>` (once per run): the one way to read a run's final tree whatever its layout
 * (a copy, or an overlay unmounted at the end of the run). `store` is the store when it is not the
 * folder `localDir` (a postgres:// URL whose run folders live in `localDir`).
 */
export async function runTree(localDir: string, runId: string, store: string = localDir): Promise<string> {
  const dest = join(localDir, "exports", runId);
  if (existsSync(dest)) return dest;
  const where = locateStore(store);
  const opened = await openStore(where, "read", runId);
  try {
    const events = await readRun(opened, where.label, runId);
    await exportRunTree({ runId, events, localDir, shared: opened.content?.() ?? null, dest });
    return dest;
  } finally {
    await opened.close();
  }
}

/**
 * Calls `fn` with a finished run's workspace folder as the builder left it (mtimes and all): a copy's
 * `workspace/`, or an overlay mounted again for the call (as `loopgate resume` would) and unmounted after.
 */
export async function withRunWorkspace<T>(
  runDir: string,
  fn: (workspace: string) => T | Promise<T>,
): Promise<T> {
  const o = overlayOf(runDir);
  if (o) attachOverlay(o);
  try {
    return await fn(join(runDir, "workspace"));
  } finally {
    if (o) detachOverlay(o);
  }
}

/** Where a run keeps on the host the files its builder wrote: an overlay's upper layer, or its copy. */
export const keptFiles = (runDir: string): string =>
  overlayOf(runDir) ? join(runDir, "upper") : join(runDir, "workspace");
