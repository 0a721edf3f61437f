import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { WorkspaceObserver } from "../../src/workspace/observer.js";
import { writeObservation } from "../../src/workspace/write-observation.js";
import { useTempDirs, writeTree } from "./temp-dirs.js";

const sha = (s: string) => createHash("sha256").update(s).digest("hex");

describe("writeObservation", () => {
  const tmp = useTempDirs();

  /** A tree with folders, modes, a symlink and a name that is not UTF-8, observed. */
  async function observed() {
    const root = tmp();
    writeTree(root, { "src/a.js": "a", "src/deep/b.js": "b", "bin/run": "#!/bin/sh\n", "empty.txt": "" });
    chmodSync(path.join(root, "bin/run"), 0o755);
    chmodSync(path.join(root, "src/deep"), 0o750);
    mkdirSync(path.join(root, "void"));
    symlinkSync("src/a.js", path.join(root, "alias"));
    symlinkSync("/nowhere/at/all", path.join(root, "dangling"));
    writeFileSync(Buffer.from(`${root}/caf\xe9`, "latin1"), "latin-1 name");
    return { root, obs: await new WorkspaceObserver(root).observe() };
  }
  const fromTree = (root: string) => (e: { path: string }) => path.join(root, e.path);

  it("writes the recorded tree: observed again it is the same observation, id for id", async () => {
    const { root, obs } = await observed();
    const dest = path.join(tmp(), "out");
    const written = await writeObservation(obs, dest, [fromTree(root)]);
    expect((await new WorkspaceObserver(dest).observe()).id).toBe(obs.id);
    expect(written).toMatchObject({ files: 5, symlinks: 2, dirs: 4, skipped: [] });
    expect(written.bytes).toBe(obs.entries.reduce((n, e) => n + (e.type === "file" ? e.size : 0), 0));
    expect(readlinkSync(path.join(dest, "dangling"))).toBe("/nowhere/at/all");
    expect(lstatSync(path.join(dest, "src/deep")).mode & 0o777).toBe(0o750);
  });

  it("takes each file from the first source whose content is the recorded one; bytes count as a source", async () => {
    const { root, obs } = await observed();
    // The first source is stale for src/a.js (same size, other bytes), the second lacks it, the third is right.
    const stale = tmp();
    writeTree(stale, { "src/a.js": "X" });
    const bytes = (e: { hash: string }) => (e.hash === sha("a") ? Buffer.from("a") : null);
    const dest = path.join(tmp(), "out");
    await writeObservation(obs, dest, [
      (e) => (e.path === "src/a.js" ? path.join(stale, e.path) : null),
      bytes,
      fromTree(root),
    ]);
    expect(readFileSync(path.join(dest, "src/a.js"), "utf8")).toBe("a");
    expect((await new WorkspaceObserver(dest).observe()).id).toBe(obs.id);
  });

  it("never writes a file whose source changed, and says which file and why", async () => {
    const { root, obs } = await observed();
    writeFileSync(path.join(root, "src/a.js"), "Z");
    const dest = path.join(tmp(), "out");
    await expect(writeObservation(obs, dest, [fromTree(root)])).rejects.toThrow(
      /cannot write src\/a\.js: .*changed since it was observed/,
    );
    expect(existsSync(path.join(dest, "src/a.js"))).toBe(false);
  });

  it("reads no source through a symlink", async () => {
    const { root, obs } = await observed();
    const decoy = tmp();
    writeTree(decoy, { "a.js": "a" });
    const linked = tmp();
    mkdirSync(path.join(linked, "src"));
    symlinkSync(path.join(decoy, "a.js"), path.join(linked, "src/a.js"));
    const dest = path.join(tmp(), "out");
    const source = (e: { path: string }) => path.join(e.path === "src/a.js" ? linked : root, e.path);
    await expect(writeObservation(obs, dest, [source])).rejects.toThrow(/cannot write src\/a\.js: .*ELOOP/);
  });

  it("refuses a destination that holds anything, or is a file", async () => {
    const { root, obs } = await observed();
    const full = tmp();
    writeFileSync(path.join(full, "keep.txt"), "mine");
    await expect(writeObservation(obs, full, [fromTree(root)])).rejects.toThrow(/is not empty/);
    expect(readdirSync(full)).toEqual(["keep.txt"]);
    const file = path.join(tmp(), "file");
    writeFileSync(file, "x");
    await expect(writeObservation(obs, file, [fromTree(root)])).rejects.toThrow(/is not a folder/);
  });

  it("drops set-uid, set-gid and sticky bits, and names the FIFOs it cannot write", async () => {
    const root = tmp();
    writeTree(root, { tool: "x", "shared/f": "f" });
    chmodSync(path.join(root, "tool"), 0o4755);
    chmodSync(path.join(root, "shared"), 0o1777);
    execFileSync("mkfifo", [path.join(root, "pipe")]);
    const obs = await new WorkspaceObserver(root).observe();
    const dest = path.join(tmp(), "out");
    const written = await writeObservation(obs, dest, [fromTree(root)]);
    expect(written.skipped).toEqual(["pipe"]);
    expect(lstatSync(path.join(dest, "tool")).mode & 0o7777).toBe(0o755);
    expect(lstatSync(path.join(dest, "shared")).mode & 0o7777).toBe(0o777);
    expect(existsSync(path.join(dest, "pipe"))).toBe(false);
  });
});
