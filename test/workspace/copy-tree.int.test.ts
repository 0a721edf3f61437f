import { execFileSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  utimesSync,
} from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { copyTree } from "../../src/workspace/copy-tree.js";
import { WorkspaceObserver } from "../../src/workspace/observer.js";
import { useTempDirs, writeTree } from "./temp-dirs.js";

describe("copyTree", () => {
  const tmp = useTempDirs();

  it("copies like cp -a: content, modes, mtimes, symlinks as symlinks; skips FIFOs", async () => {
    const src = tmp();
    writeTree(src, { "a/b.txt": "hello", "run.sh": "#!/bin/sh\n", ".hidden": "h" });
    chmodSync(path.join(src, "run.sh"), 0o751);
    chmodSync(path.join(src, "a"), 0o555); // read-only directory: must still be filled
    utimesSync(path.join(src, "a/b.txt"), 1_000_000, 1_000_000);
    symlinkSync("/etc/passwd", path.join(src, "pw"));
    symlinkSync("missing-target", path.join(src, "dangling"));
    execFileSync("mkfifo", [path.join(src, "pipe")]);
    const dest = path.join(tmp(), "copy");

    const result = await copyTree(src, dest);

    expect(result).toEqual({ files: 3, dirs: 1, symlinks: 2, skipped: 1 });
    expect(readFileSync(path.join(dest, "a/b.txt"), "utf8")).toBe("hello");
    expect(lstatSync(path.join(dest, "run.sh")).mode & 0o7777).toBe(0o751);
    expect(lstatSync(path.join(dest, "a")).mode & 0o7777).toBe(0o555);
    expect(lstatSync(path.join(dest, "a/b.txt")).mtimeMs).toBe(1_000_000_000);
    expect(readlinkSync(path.join(dest, "pw"))).toBe("/etc/passwd");
    expect(lstatSync(path.join(dest, "pw")).isSymbolicLink()).toBe(true);
    expect(readlinkSync(path.join(dest, "dangling"))).toBe("missing-target");
    expect(existsSync(path.join(dest, "pipe"))).toBe(false);
    chmodSync(path.join(dest, "a"), 0o755);
    chmodSync(path.join(src, "a"), 0o755);
  });

  it("gives an observation equal to the source's, FIFOs aside", async () => {
    const src = tmp();
    writeTree(src, { "x/y/z.js": "1", "x/w.md": "2" });
    symlinkSync("x/w.md", path.join(src, "link"));
    const dest = path.join(tmp(), "copy");
    await copyTree(src, dest);
    const [a, b] = await Promise.all([
      new WorkspaceObserver(src).observe(),
      new WorkspaceObserver(dest).observe(),
    ]);
    expect(b.id).toBe(a.id);
  });

  it("leaves out what the filter rejects, with its subtree", async () => {
    const src = tmp();
    writeTree(src, { "keep/a": "1", "node_modules/x/y": "2", "b.log": "3", c: "4" });
    const dest = path.join(tmp(), "copy");
    await copyTree(src, dest, { filter: (rel) => rel !== "node_modules" && !rel.endsWith(".log") });
    const paths = (await new WorkspaceObserver(dest).observe()).entries.map((e) => e.path);
    expect(paths).toEqual(["c", "keep", "keep/a"]);
  });

  it("refuses an existing destination and a destination inside the source", async () => {
    const src = tmp();
    const dest = tmp();
    await expect(copyTree(src, dest)).rejects.toThrow(`the destination already exists`);
    mkdirSync(path.join(src, "sub"));
    await expect(copyTree(src, path.join(src, "sub/copy"))).rejects.toThrow(/into itself/);
  });
});

describe("copyTree keeps no privileged bit", () => {
  const tmp = useTempDirs();

  it("set-uid, set-gid and sticky bits are cleared on files and folders; the rest of the mode stays", async () => {
    const src = tmp();
    writeTree(src, { "bin/su": "x", "bin/sg": "y", "shared/f": "z" });
    chmodSync(path.join(src, "bin/su"), 0o4755);
    chmodSync(path.join(src, "bin/sg"), 0o2750);
    chmodSync(path.join(src, "shared"), 0o1777);
    expect(lstatSync(path.join(src, "bin/su")).mode & 0o7777).toBe(0o4755);
    const dest = path.join(tmp(), "copy");
    await copyTree(src, dest);
    expect(lstatSync(path.join(dest, "bin/su")).mode & 0o7777).toBe(0o755);
    expect(lstatSync(path.join(dest, "bin/sg")).mode & 0o7777).toBe(0o750);
    expect(lstatSync(path.join(dest, "shared")).mode & 0o7777).toBe(0o777);
  });
});

const asRoot = process.getuid?.() === 0;
describe.skipIf(!asRoot)("copyTree with an owner (as root)", () => {
  const tmp = useTempDirs();
  if (!asRoot) console.log("copyTree with an owner: skipped, chown needs root");

  it("makes every entry of the copy the owner's, symlinks themselves, and leaves the source and link targets alone", async () => {
    const src = tmp();
    writeTree(src, { "a/b/c.txt": "1", "top.txt": "2" });
    const outside = path.join(tmp(), "target.txt");
    writeTree(path.dirname(outside), { "target.txt": "t" });
    symlinkSync(outside, path.join(src, "a/out"));
    chmodSync(path.join(src, "a"), 0o555);
    chmodSync(path.join(src, "top.txt"), 0o4755);
    const dest = path.join(tmp(), "copy");

    await copyTree(src, dest, { owner: { uid: 65534, gid: 65533 } });

    const entries = ["", "a", "a/b", "a/b/c.txt", "top.txt", "a/out"];
    for (const rel of entries) {
      const st = lstatSync(path.join(dest, rel));
      expect([rel, st.uid, st.gid]).toEqual([rel, 65534, 65533]);
      expect(lstatSync(path.join(src, rel)).uid, rel).toBe(0);
    }
    expect(lstatSync(path.join(dest, "a/out")).isSymbolicLink()).toBe(true);
    expect(lstatSync(outside).uid).toBe(0);
    // The mode stays as without an owner: privileged bits cleared, the rest kept.
    expect(lstatSync(path.join(dest, "a")).mode & 0o7777).toBe(0o555);
    expect(lstatSync(path.join(dest, "top.txt")).mode & 0o7777).toBe(0o755);
    chmodSync(path.join(dest, "a"), 0o755);
    chmodSync(path.join(src, "a"), 0o755);
  });
});
