import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { globProblem } from "../../src/core/kernel/glob-syntax.js";
import { planGateChanges } from "../../src/core/observation/gate-change-plan.js";
import { BlobStore } from "../../src/workspace/blob-store.js";
import { copyTree } from "../../src/workspace/copy-tree.js";
import { buildGateEnvironment } from "../../src/workspace/gate-environment.js";
import { ObservationStore } from "../../src/workspace/observation-store.js";
import { WorkspaceObserver } from "../../src/workspace/observer.js";
import { listFiles } from "../../src/workspace/tree-files.js";
import { useTempDirs, writeTree } from "./temp-dirs.js";

/** `dir/` followed by raw bytes: a name as the file system has it, whatever its encoding. */
const raw = (dir: string, ...parts: (string | number[])[]) =>
  Buffer.concat([
    Buffer.from(`${dir}/`),
    ...parts.map((p) => (typeof p === "string" ? Buffer.from(p) : Buffer.from(p))),
  ]);
const LATIN1_CAFE = [0x63, 0x61, 0x66, 0xe9]; // "café" in Latin-1: 0xE9 alone is not UTF-8

/** Every name under `dir`, as raw bytes joined by "/" (hex for bytes that are not printable ASCII). */
function rawListing(dir: Buffer, prefix = ""): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir, { encoding: "buffer" })) {
    const shown = [...name]
      .map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : `<${b.toString(16)}>`))
      .join("");
    const rel = prefix ? `${prefix}/${shown}` : shown;
    out.push(rel);
    const abs = Buffer.concat([dir, Buffer.from("/"), name]);
    if (lstatSync(abs).isDirectory()) out.push(...rawListing(abs, rel));
  }
  return out.sort();
}

describe("names that are not UTF-8 are names (copy, observe, plan, gate environment, rollback)", () => {
  const tmp = useTempDirs();

  it("copyTree copies them byte for byte, folders, files and link targets alike", async () => {
    const src = tmp();
    writeTree(src, { "ok.txt": "ok" });
    writeFileSync(raw(src, LATIN1_CAFE, ".txt"), "latin-1");
    mkdirSync(raw(src, "dir", [0xff]));
    writeFileSync(raw(src, "dir", [0xff], "/in", [0xfe]), "deep");
    symlinkSync(raw("", "target", [0xe9]).subarray(1), raw(src, "link", [0xe9]));
    const dest = path.join(tmp(), "copy");
    const result = await copyTree(src, dest);
    expect(result).toEqual({ files: 3, dirs: 1, symlinks: 1, skipped: 0 });
    expect(rawListing(Buffer.from(dest))).toEqual(rawListing(Buffer.from(src)));
    expect(readFileSync(raw(dest, LATIN1_CAFE, ".txt"), "utf8")).toBe("latin-1");
    expect(readFileSync(raw(dest, "dir", [0xff], "/in", [0xfe]), "utf8")).toBe("deep");
    expect(readlinkSync(raw(dest, "link", [0xe9]), { encoding: "buffer" })).toEqual(
      Buffer.from([0x74, 0x61, 0x72, 0x67, 0x65, 0x74, 0xe9]),
    );
  });

  it("a builder's new, changed and protected odd names are planned like any name and reach the gate environment byte-exact", async () => {
    const base = tmp();
    const pristineDir = path.join(base, "pristine");
    writeTree(pristineDir, { "src/a.js": "a", "test/t.js": "t" });
    writeFileSync(raw(pristineDir, "src/", LATIN1_CAFE, ".txt"), "v1");
    writeFileSync(raw(pristineDir, "test/", [0xe9]), "protected v1");
    const workspaceDir = path.join(base, "work");
    await copyTree(pristineDir, workspaceDir);
    // The builder edits the Latin-1 file, adds an odd folder with a file, and edits a protected odd name.
    writeFileSync(raw(workspaceDir, "src/", LATIN1_CAFE, ".txt"), "v2");
    mkdirSync(raw(workspaceDir, "src/new", [0xff]));
    writeFileSync(raw(workspaceDir, "src/new", [0xff], "/x", [0xe8]), "new");
    writeFileSync(raw(workspaceDir, "test/", [0xe9]), "builder was here");
    const pristine = await new WorkspaceObserver(pristineDir).observe();
    const workspace = await new WorkspaceObserver(workspaceDir).observe();
    const plan = planGateChanges(pristine, workspace, { deliverables: ["src/**"], protected: ["test/**"] });
    expect(plan.carry.map((e) => e.path)).toEqual([
      "src/caf\uDCE9.txt",
      "src/new\uDCFF",
      "src/new\uDCFF/x\uDCE8",
    ]);
    expect(plan.findings.map((f) => [f.code, f.severity, f.path])).toEqual([
      ["protected_path_modified", "blocking", "test/\uDCE9"],
    ]);
    expect(plan.findings.some((f) => f.code === "unsupported_entry")).toBe(false);
    // A glob names an odd name by its encoded path, as a task file can write it ("caf\udce9.txt" in YAML).
    expect(globProblem("src/caf\uDCE9.txt")).toBeNull();
    const exact = planGateChanges(pristine, workspace, {
      deliverables: ["src/**"],
      protected: ["test/**", "src/caf\uDCE9.txt"],
    });
    expect(exact.findings.map((f) => [f.code, f.path])).toContainEqual([
      "protected_path_modified",
      "src/caf\uDCE9.txt",
    ]);
    expect(exact.carry.map((e) => e.path)).not.toContain("src/caf\uDCE9.txt");
    const heldoutDir = path.join(base, "heldout");
    mkdirSync(heldoutDir);
    writeFileSync(raw(heldoutDir, "hidden", [0xfa]), "held out");
    const destDir = path.join(base, "env");
    await buildGateEnvironment({
      pristineDir,
      pristine,
      workspaceDir,
      workspace,
      plan,
      heldoutDir,
      destDir,
      mode: "copy",
    });
    expect(readFileSync(raw(destDir, "src/", LATIN1_CAFE, ".txt"), "utf8")).toBe("v2");
    expect(readFileSync(raw(destDir, "src/new", [0xff], "/x", [0xe8]), "utf8")).toBe("new");
    expect(readFileSync(raw(destDir, "test/", [0xe9]), "utf8")).toBe("protected v1");
    expect(readFileSync(raw(destDir, "hidden", [0xfa]), "utf8")).toBe("held out");
    expect(rawListing(Buffer.from(destDir))).toEqual(
      [
        "hidden<fa>",
        "src",
        "src/a.js",
        "src/caf<e9>.txt",
        "src/new<ff>",
        "src/new<ff>/x<e8>",
        "test",
        "test/<e9>",
        "test/t.js",
      ].sort(),
    );
    expect(listFiles(heldoutDir)).toEqual(["hidden\uDCFA"]);
  });

  it("a carried odd name that changed after it was observed is refused like any other", async () => {
    const base = tmp();
    const pristineDir = path.join(base, "pristine");
    writeTree(pristineDir, { "a.txt": "a" });
    const workspaceDir = path.join(base, "work");
    await copyTree(pristineDir, workspaceDir);
    writeFileSync(raw(workspaceDir, [0xe9]), "observed");
    const pristine = await new WorkspaceObserver(pristineDir).observe();
    const workspace = await new WorkspaceObserver(workspaceDir).observe();
    const plan = planGateChanges(pristine, workspace, { deliverables: [], protected: [] });
    writeFileSync(raw(workspaceDir, [0xe9]), "swapped!");
    const destDir = path.join(base, "env");
    await expect(
      buildGateEnvironment({ pristineDir, pristine, workspaceDir, workspace, plan, destDir, mode: "copy" }),
    ).rejects.toThrow(/\uDCE9 in .* changed content since it was observed/);
  });

  it("observations keep odd names through the store, and a rollback restores them by their bytes (sparse files too)", async () => {
    const base = tmp();
    const ws = path.join(base, "ws");
    mkdirSync(ws);
    writeFileSync(raw(ws, LATIN1_CAFE), "one");
    mkdirSync(raw(ws, "d", [0xff]));
    writeFileSync(raw(ws, "d", [0xff], "/sparse", [0xfe]), "");
    truncateSync(raw(ws, "d", [0xff], "/sparse", [0xfe]), 4 << 20); // all hole
    symlinkSync(Buffer.from([0x74, 0xe9]), raw(ws, "l", [0xe9]));
    const obs = await new WorkspaceObserver(ws).observe();
    const observations = new ObservationStore(path.join(base, "obs"));
    await observations.put(obs);
    const stored = readFileSync(path.join(base, "obs", `${obs.id}.json`), "utf8");
    expect(stored).toContain('"caf\\udce9"');
    const back = await observations.get(obs.id);
    expect(back).toEqual(obs);
    const blobs = new BlobStore(path.join(base, "blobs"));
    await blobs.save(obs, ws);
    // The builder removes and rewrites everything; a rollback puts the odd names back, bytes and all.
    writeFileSync(raw(ws, LATIN1_CAFE), "two");
    const { rmSync } = await import("node:fs");
    rmSync(raw(ws, "d", [0xff]), { recursive: true });
    rmSync(raw(ws, "l", [0xe9]));
    writeFileSync(raw(ws, "extra", [0xe0]), "x");
    const r = await blobs.restore(back, ws);
    expect(r.removed).toBe(1);
    const again = await new WorkspaceObserver(ws).observe();
    expect(again.id).toBe(obs.id);
    expect(readFileSync(raw(ws, LATIN1_CAFE), "utf8")).toBe("one");
    const sparse = lstatSync(raw(ws, "d", [0xff], "/sparse", [0xfe]));
    expect(sparse.size).toBe(4 << 20);
    expect(sparse.blocks * 512).toBeLessThan(1 << 20);
  });

  it("a stored observation with a stray surrogate (never an encoding) is corrupt, not read as some bytes", async () => {
    const base = tmp();
    const store = new ObservationStore(base);
    const { observationId } = await import("../../src/core/observation/observation.js");
    const entries = [{ path: "a\uD800", type: "dir" as const, mode: 0o755, size: 0, hash: "" }];
    const id = observationId([{ path: "a", type: "dir", mode: 0o755, size: 0, hash: "" }]);
    writeFileSync(path.join(base, `${id}.json`), JSON.stringify({ id, entries }));
    await expect(store.get(id)).rejects.toThrow(/not an encoded path/);
  });
});
