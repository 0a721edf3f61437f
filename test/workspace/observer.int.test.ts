import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { diffObservations } from "../../src/core/observation/observation.js";
import { WorkspaceObserver } from "../../src/workspace/observer.js";
import { useTempDirs, writeTree } from "./temp-dirs.js";

const sha = (s: string | Buffer) => createHash("sha256").update(s).digest("hex");
/** Makes every file look old enough to be trusted from the cache. */
const later = () => Date.now() + 60_000;

describe("WorkspaceObserver", () => {
  const tmp = useTempDirs();

  it("records files, directories and modes, sorted by path", async () => {
    const root = tmp();
    writeTree(root, { "a/b.txt": "hello", "a-c": "x", "run.sh": "#!/bin/sh\n" });
    for (const f of ["a-c", "a/b.txt"]) chmodSync(path.join(root, f), 0o644); // independent of the umask
    chmodSync(path.join(root, "run.sh"), 0o755);
    chmodSync(path.join(root, "a"), 0o750);
    const o = await new WorkspaceObserver(root).observe();
    expect(o.entries).toEqual([
      { path: "a", type: "dir", mode: 0o750, size: 0, hash: "" },
      { path: "a-c", type: "file", mode: 0o644, size: 1, hash: sha("x") },
      { path: "a/b.txt", type: "file", mode: 0o644, size: 5, hash: sha("hello") },
      { path: "run.sh", type: "file", mode: 0o755, size: 10, hash: sha("#!/bin/sh\n") },
    ]);
    expect(o.id).toMatch(/^[0-9a-f]{64}$/);
  });

  it("records a symlink's target and never follows it", async () => {
    const root = tmp();
    symlinkSync("/etc/passwd", path.join(root, "pw"));
    symlinkSync("/", path.join(root, "rootdir"));
    const o = await new WorkspaceObserver(root).observe();
    expect(o.entries).toEqual([
      { path: "pw", type: "symlink", mode: 0o777, size: 11, hash: sha("/etc/passwd"), target: "/etc/passwd" },
      { path: "rootdir", type: "symlink", mode: 0o777, size: 1, hash: sha("/"), target: "/" },
    ]);
    expect(o.entries[0]?.hash).not.toBe(sha(readFileSync("/etc/passwd")));
  });

  it("sees everything git would hide: .gitignore, info/exclude and .git itself are ignored", async () => {
    const root = tmp();
    execFileSync("git", ["init", "-q", root]);
    writeTree(root, { ".gitignore": "*\n", "secret.txt": "s", ".env": "K=V", "dist/out.js": "1" });
    writeFileSync(path.join(root, ".git/info/exclude"), "*\n");
    const paths = (await new WorkspaceObserver(root).observe()).entries.map((e) => e.path);
    expect(paths).toEqual(
      expect.arrayContaining([".gitignore", ".env", "secret.txt", "dist/out.js", ".git/HEAD"]),
    );
    expect(paths).toContain(".git/info/exclude");
  });

  it("records a FIFO as other without opening it", async () => {
    const root = tmp();
    execFileSync("mkfifo", ["-m", "600", path.join(root, "pipe")]);
    const o = await new WorkspaceObserver(root).observe();
    expect(o.entries).toEqual([{ path: "pipe", type: "other", mode: 0o600, size: 0, hash: "" }]);
  });

  // Was: recorded as "other" under a lossy name (U+FFFD), so it was never carried. A name is a name.
  it("observes a name that is not valid UTF-8 like any other, under its encoded path", async () => {
    const root = tmp();
    const raw = (s: string, ...b: number[]) => Buffer.concat([Buffer.from(s), Buffer.from(b)]);
    writeFileSync(raw(`${root}/bad-`, 0xff, 0xfe), "x");
    writeFileSync(raw(`${root}/bad-`, 0xff, 0xfd), "z");
    mkdirSync(raw(`${root}/d`, 0xe9));
    writeFileSync(raw(`${root}/d`, 0xe9, 0x2f, 0x66), "in");
    symlinkSync(raw("t", 0xe9), raw(`${root}/l`, 0xe9));
    writeFileSync(path.join(root, "good"), "y");
    const o = await new WorkspaceObserver(root).observe();
    expect(o.entries.map((e) => [e.path, e.type, e.hash, e.target])).toEqual([
      ["bad-\uDCFF\uDCFD", "file", sha("z"), undefined],
      ["bad-\uDCFF\uDCFE", "file", sha("x"), undefined],
      ["d\uDCE9", "dir", "", undefined],
      ["d\uDCE9/f", "file", sha("in"), undefined],
      ["good", "file", sha("y"), undefined],
      ["l\uDCE9", "symlink", sha(raw("t", 0xe9)), "t\uDCE9"],
    ]);
    // Changing the file behind the odd name is a change like any other.
    writeFileSync(raw(`${root}/d`, 0xe9, 0x2f, 0x66), "changed");
    const again = await new WorkspaceObserver(root).observe();
    expect(diffObservations(o, again).modified).toEqual(["d\uDCE9/f"]);
  });

  it("hashes each file once while its stat is unchanged", async () => {
    const root = tmp();
    const files: Record<string, string> = {};
    for (let i = 0; i < 50; i++) files[`d${i % 5}/f${i}`] = `content ${i}`;
    writeTree(root, files);
    const observer = new WorkspaceObserver(root, { now: later });
    const first = await observer.observe();
    expect(observer.stats.filesHashed).toBe(50);
    const second = await observer.observe();
    expect(observer.stats.filesHashed).toBe(50);
    expect(observer.stats.cacheHits).toBe(50);
    expect(second.id).toBe(first.id);

    writeFileSync(path.join(root, "d1/f1"), "changed");
    const third = await observer.observe();
    expect(observer.stats.filesHashed).toBe(51);
    expect(diffObservations(second, third)).toEqual({
      added: [],
      modified: ["d1/f1"],
      removed: [],
      typeChanged: [],
    });
  });

  it("re-hashes a file cached while racily new, as git does", async () => {
    const root = tmp();
    writeTree(root, { f: "aaaa" });
    const observer = new WorkspaceObserver(root); // real clock: the file was written just now
    await observer.observe();
    await observer.observe();
    expect(observer.stats.filesHashed).toBe(2);
    expect(observer.stats.cacheHits).toBe(0);
  });

  it("detects a same-size rewrite within the same second, even with the mtime put back", async () => {
    const root = tmp();
    const f = path.join(root, "f");
    writeFileSync(f, "aaaa");
    const { atime, mtime } = statSync(f);
    const observer = new WorkspaceObserver(root);
    const before = await observer.observe();
    writeFileSync(f, "bbbb");
    utimesSync(f, atime, mtime);
    const after = await observer.observe();
    expect(after.entries[0]?.hash).toBe(sha("bbbb"));
    expect(diffObservations(before, after).modified).toEqual(["f"]);
  });

  it("persists its stat cache outside the tree and survives a damaged one", async () => {
    const root = tmp();
    const cacheFile = path.join(tmp(), "cache.json");
    writeTree(root, { a: "1", "b/c": "2", "b/d": "3" });
    const first = await new WorkspaceObserver(root, { cacheFile, now: later }).observe();
    const reloaded = new WorkspaceObserver(root, { cacheFile, now: later });
    expect((await reloaded.observe()).id).toBe(first.id);
    expect(reloaded.stats.filesHashed).toBe(0);

    writeFileSync(cacheFile, "{ not json");
    const damaged = new WorkspaceObserver(root, { cacheFile, now: later });
    expect((await damaged.observe()).id).toBe(first.id);
    expect(damaged.stats.filesHashed).toBe(3);
  });

  it("refuses a stat cache inside the observed tree, where the agent could forge it", () => {
    const root = tmp();
    expect(() => new WorkspaceObserver(root, { cacheFile: path.join(root, ".cache.json") })).toThrow(
      /must live outside the observed tree/,
    );
  });

  it("fails clearly when the root is missing", async () => {
    const missing = path.join(tmp(), "gone");
    await expect(new WorkspaceObserver(missing).observe()).rejects.toThrow(`cannot observe ${missing}`);
  });
});
