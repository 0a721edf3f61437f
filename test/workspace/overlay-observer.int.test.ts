import { execFileSync } from "node:child_process";
import {
  chmodSync,
  linkSync,
  mkdirSync,
  renameSync,
  rmSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { LimitExceededError } from "../../src/core/task/limits.js";
import { copyTree } from "../../src/workspace/copy-tree.js";
import { WorkspaceObserver } from "../../src/workspace/observer.js";
import { mountOverlay, probeOverlay, unmountOverlay } from "../../src/workspace/overlay-mount.js";
import { OverlayObserver } from "../../src/workspace/overlay-observer.js";
import { useTempDirs, writeTree } from "./temp-dirs.js";

const unavailable = probeOverlay(tmpdir());
const later = () => Date.now() + 60_000;
const odd = Buffer.from([0x6f, 0x64, 0x64, 0xe9, 0xff]); // "odd" and two bytes that are not UTF-8

/** The pristine tree: a bit of everything a change can touch. */
function pristineTree(root: string) {
  writeTree(root, {
    "keep.txt": "unchanged",
    "edit.txt": "before",
    "gone.txt": "deleted by the builder",
    "mode.sh": "#!/bin/sh\n",
    "linked.txt": "hard-linked later",
    "renamed.txt": "moved within its folder",
    "dir-gone/a.txt": "a",
    "dir-gone/deep/b.txt": "b",
    "dir-to-file/x.txt": "x",
    "file-to-dir": "a file first",
    "recreated/old.txt": "old",
    "recreated/sub/old2.txt": "old2",
    "nested/keep/k.txt": "k",
    "nested/edit/e.txt": "e",
    "a-b/sort.txt": "sorts between a and a/",
    "a/inner.txt": "in a",
  });
  writeFileSync(Buffer.from(path.join(root, `${odd.toString("latin1")}`), "latin1"), "x");
  chmodSync(path.join(root, "mode.sh"), 0o644);
  symlinkSync("keep.txt", path.join(root, "link-kept"));
}

/** What the builder does, the same on the mount and on a plain copy. */
function change(root: string) {
  const p = (rel: string) => path.join(root, rel);
  writeFileSync(p("edit.txt"), "after");
  writeFileSync(p("new.txt"), "new");
  rmSync(p("gone.txt"));
  chmodSync(p("mode.sh"), 0o755);
  chmodSync(p("nested"), 0o750);
  linkSync(p("linked.txt"), p("linked-too.txt"));
  writeFileSync(p("fresh.txt"), "fresh");
  linkSync(p("fresh.txt"), p("fresh-link.txt"));
  renameSync(p("renamed.txt"), p("renamed-now.txt"));
  rmSync(p("dir-gone"), { recursive: true });
  rmSync(p("dir-to-file"), { recursive: true });
  writeFileSync(p("dir-to-file"), "now a file");
  unlinkSync(p("file-to-dir"));
  mkdirSync(p("file-to-dir"));
  writeFileSync(p("file-to-dir/inside.txt"), "inside");
  rmSync(p("recreated"), { recursive: true });
  mkdirSync(p("recreated/sub"), { recursive: true });
  writeFileSync(p("recreated/new.txt"), "new");
  writeFileSync(p("nested/edit/e.txt"), "e2");
  mkdirSync(p("brand/new/tree"), { recursive: true });
  writeFileSync(p("brand/new/tree/t.txt"), "t");
  symlinkSync("../escape", p("brand/link-out"));
  writeFileSync(p("name with\nnewline and spaces"), "odd");
  writeFileSync(Buffer.from(`${p("nested/keep")}/${odd.toString("latin1")}-new`, "latin1"), "raw");
  rmSync(Buffer.from(`${root}/${odd.toString("latin1")}`, "latin1"));
  writeFileSync(p("a/inner2.txt"), "in a too");
  execFileSync("mkfifo", [p("a-fifo")]);
}

describe.skipIf(unavailable !== null)("OverlayObserver", () => {
  const tmp = useTempDirs();
  const mounted: string[] = [];
  afterEach(() => {
    for (const m of mounted.splice(0)) unmountOverlay(m);
  });

  async function setUp() {
    const dir = tmp();
    const lower = path.join(dir, "lower");
    mkdirSync(lower);
    pristineTree(lower);
    const copy = path.join(dir, "copy");
    await copyTree(lower, copy);
    const d = {
      lower,
      upper: path.join(dir, "upper"),
      work: path.join(dir, "work"),
      merged: path.join(dir, "merged"),
    };
    for (const p of [d.upper, d.work, d.merged]) mkdirSync(p);
    mountOverlay(d);
    mounted.push(d.merged);
    const pristine = await new WorkspaceObserver(lower).observe();
    return { dir, copy, pristine, ...d };
  }

  it("observes the same tree as a walk of a plain copy given the same changes, every odd case included", async () => {
    const s = await setUp();
    const overlay = new OverlayObserver(s.merged, s.upper, s.pristine, {
      cacheFile: path.join(s.dir, "cache.json"),
      now: later,
    });
    expect((await overlay.observe()).id).toBe(s.pristine.id);
    change(s.merged);
    change(s.copy);
    const fromCopy = await new WorkspaceObserver(s.copy).observe();
    const fromUpper = await overlay.observe();
    expect(fromUpper.entries).toEqual(fromCopy.entries);
    expect(fromUpper.id).toBe(fromCopy.id);
    // The mount itself, walked whole, agrees too.
    expect((await new WorkspaceObserver(s.merged).observe()).id).toBe(fromCopy.id);
    // Only what changed was read: the pristine files were never hashed.
    expect(overlay.stats.filesHashed).toBeLessThan(fromCopy.entries.length / 2);
    // A repeat after one more change, partly from the stat cache, still agrees.
    writeFileSync(path.join(s.merged, "keep.txt"), "changed at last");
    writeFileSync(path.join(s.copy, "keep.txt"), "changed at last");
    const again = await overlay.observe();
    expect(again.id).toBe((await new WorkspaceObserver(s.copy).observe()).id);
    expect(overlay.stats.cacheHits).toBeGreaterThan(0);
  });

  it("stops at the same limits as a walk of a plain copy", async () => {
    const s = await setUp();
    change(s.merged);
    change(s.copy);
    const n = (await new WorkspaceObserver(s.copy).observe()).entries.length;
    for (const limits of [
      { files: n - 1, fileBytes: 1 << 20, totalBytes: 1 << 30 },
      // Only the moved file (now in the upper layer) is over 22 bytes; over 21, a pristine one is too.
      { files: n, fileBytes: 22, totalBytes: 1 << 30 },
      { files: n, fileBytes: 21, totalBytes: 1 << 30 },
      { files: n, fileBytes: 1 << 20, totalBytes: 60 },
    ]) {
      const copyError = await new WorkspaceObserver(s.copy, { limits }).observe().catch((e: unknown) => e);
      const upperError = await new OverlayObserver(s.merged, s.upper, s.pristine, { limits })
        .observe()
        .catch((e: unknown) => e);
      expect(copyError).toBeInstanceOf(LimitExceededError);
      expect(upperError).toBeInstanceOf(LimitExceededError);
      const { limit, allowed } = copyError as LimitExceededError;
      expect(upperError).toMatchObject({ limit, allowed });
    }
    // At exactly the count, neither stops.
    const exact = { files: n, fileBytes: 1 << 20, totalBytes: 1 << 30 };
    const a = await new WorkspaceObserver(s.copy, { limits: exact }).observe();
    const b = await new OverlayObserver(s.merged, s.upper, s.pristine, { limits: exact }).observe();
    expect(b.id).toBe(a.id);
  });
});
