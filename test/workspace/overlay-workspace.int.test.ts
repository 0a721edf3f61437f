import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { WorkspaceObserver } from "../../src/workspace/observer.js";
import { isOverlayMounted, probeOverlay } from "../../src/workspace/overlay-mount.js";
import { OverlayObserver } from "../../src/workspace/overlay-observer.js";
import { createOverlay, discardUpper, overlayOf } from "../../src/workspace/overlay-workspace.js";
import { removeTree } from "../../src/workspace/remove-tree.js";
import { useTempDirs, writeTree } from "./temp-dirs.js";

describe.skipIf(probeOverlay(tmpdir()) !== null)("an overlay workspace", () => {
  const tmp = useTempDirs();
  const runs: string[] = [];
  afterEach(async () => {
    for (const r of runs.splice(0)) await removeTree(r);
  });

  it("rolls an attempt back to the pristine tree by discarding its upper layer", async () => {
    const dir = tmp();
    const lower = path.join(dir, "snapshot");
    writeTree(lower, { "src/a.js": "a", "src/b.js": "b", "test/t.js": "t" });
    const pristine = await new WorkspaceObserver(lower).observe();
    const runDir = path.join(dir, "run");
    mkdirSync(runDir);
    runs.push(runDir);
    const o = createOverlay(runDir, lower, pristine.id);
    expect(overlayOf(runDir)).toEqual(o);
    writeFileSync(path.join(o.merged, "src/a.js"), "changed");
    rmSync(path.join(o.merged, "test"), { recursive: true });
    writeFileSync(path.join(o.merged, "new.js"), "new");
    expect((await new WorkspaceObserver(o.merged).observe()).id).not.toBe(pristine.id);
    await discardUpper(o);
    // The next attempt sees the pristine tree, and the upper layer holds nothing.
    expect((await new WorkspaceObserver(o.merged).observe()).id).toBe(pristine.id);
    expect((await new OverlayObserver(o.merged, o.upper, pristine).observe()).id).toBe(pristine.id);
    expect(readdirSync(o.upper)).toEqual([]);
    // The shared lower layer was never written.
    expect((await new WorkspaceObserver(lower).observe()).id).toBe(pristine.id);
  });

  it("is unmounted before its run folder is removed, and the lower layer survives", async () => {
    const dir = tmp();
    const lower = path.join(dir, "snapshot");
    writeTree(lower, { "keep.txt": "k" });
    const runDir = path.join(dir, "run");
    mkdirSync(runDir);
    const o = createOverlay(runDir, lower, (await new WorkspaceObserver(lower).observe()).id);
    expect(isOverlayMounted(o.merged)).toBe(true);
    await removeTree(runDir);
    expect(existsSync(runDir)).toBe(false);
    expect(isOverlayMounted(o.merged)).toBe(false);
    expect(readdirSync(lower)).toEqual(["keep.txt"]);
  });
});
