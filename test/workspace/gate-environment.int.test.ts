import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { InfrastructureError } from "../../src/core/kernel/errors.js";
import { planGateChanges } from "../../src/core/observation/gate-change-plan.js";
import { copyTree } from "../../src/workspace/copy-tree.js";
import {
  buildGateEnvironment,
  type GateEnvironmentSpec,
  removeGateEnvironment,
} from "../../src/workspace/gate-environment.js";
import { WorkspaceObserver } from "../../src/workspace/observer.js";
import { isOverlayMounted, probeOverlay } from "../../src/workspace/overlay-mount.js";
import { useTempDirs, writeTree } from "./temp-dirs.js";

const PRISTINE = {
  "src/a.js": "a v1",
  "src/b.js": "b v1",
  "src/c.js": "c v1",
  "test/a.test.js": "real test",
  "docs/readme.md": "docs v1",
  "package.json": "{}",
  "spec/visible.test.js": "visible",
};

describe("buildGateEnvironment", () => {
  const tmp = useTempDirs();

  /** A pristine tree, a run workspace copied from it, and a function that plans and builds the env. */
  async function setup(rules: { deliverables: string[]; protected: string[] }) {
    const base = tmp();
    const pristineDir = path.join(base, "pristine");
    writeTree(pristineDir, PRISTINE);
    const workspaceDir = path.join(base, "work");
    await copyTree(pristineDir, workspaceDir);
    const heldoutDir = path.join(base, "heldout");
    writeTree(heldoutDir, { "spec/hidden.test.js": "held out", "src/expected.json": "[1]" });
    const ws = (rel: string) => path.join(workspaceDir, rel);
    const build = async (over: Partial<GateEnvironmentSpec> = {}) => {
      const pristine = await new WorkspaceObserver(pristineDir).observe();
      const workspace = await new WorkspaceObserver(workspaceDir).observe();
      const plan = planGateChanges(pristine, workspace, rules);
      const destDir = path.join(base, "env");
      const spec = {
        pristineDir,
        pristine,
        workspaceDir,
        workspace,
        plan,
        heldoutDir,
        destDir,
        mode: "link" as const,
      };
      const env = await buildGateEnvironment({ ...spec, ...over });
      return { env, plan, read: (rel: string) => readFileSync(path.join(env.dir, rel), "utf8"), destDir };
    };
    return { base, pristineDir, workspaceDir, ws, build };
  }

  it("keeps no set-uid, set-gid or sticky bit: not on carried files, folders or held-out files", async () => {
    const { base, ws, build } = await setup({ deliverables: ["src/**"], protected: [] });
    writeFileSync(ws("src/a.js"), "a v2");
    chmodSync(ws("src/a.js"), 0o4755);
    mkdirSync(ws("src/shared"));
    chmodSync(ws("src/shared"), 0o1777);
    chmodSync(path.join(base, "heldout", "spec", "hidden.test.js"), 0o2755);
    for (const mode of ["link", "copy"] as const) {
      rmSync(path.join(base, "env"), { recursive: true, force: true });
      const { env } = await build({ mode });
      const at = (rel: string) => lstatSync(path.join(env.dir, rel)).mode & 0o7777;
      expect([at("src/a.js"), at("src/shared"), at("spec/hidden.test.js")], mode).toEqual([
        0o755, 0o777, 0o755,
      ]);
    }
  });

  it("carries deliverables, restores protected paths, drops outside changes and removed deliverables", async () => {
    const { ws, build } = await setup({ deliverables: ["src/**"], protected: ["test", "package.json"] });
    writeFileSync(ws("src/a.js"), "a v2");
    rmSync(ws("src/b.js"));
    writeFileSync(ws("src/new.js"), "new");
    // A builder "weakening" a protected test (file content, not a skipped test of this suite).
    writeFileSync(ws("test/a.test.js"), "test.skip()");
    writeFileSync(ws("package.json"), '{"scripts":{"test":"true"}}');
    writeFileSync(ws("docs/readme.md"), "docs v2");
    writeFileSync(ws("docs/extra.md"), "extra");
    symlinkSync("/etc/passwd", ws("src/evil"));
    rmSync(ws("src/c.js"));
    symlinkSync("../../../etc/hostname", ws("src/c.js"));

    const { env, plan, read } = await build();

    expect(read("src/a.js")).toBe("a v2");
    expect(read("src/new.js")).toBe("new");
    expect(existsSync(path.join(env.dir, "src/b.js"))).toBe(false);
    expect(read("test/a.test.js")).toBe("real test");
    expect(read("package.json")).toBe("{}");
    expect(read("docs/readme.md")).toBe("docs v1");
    expect(existsSync(path.join(env.dir, "docs/extra.md"))).toBe(false);
    expect(lstatSync(path.join(env.dir, "src/evil"), { throwIfNoEntry: false })).toBeUndefined();
    expect(lstatSync(path.join(env.dir, "src/c.js"), { throwIfNoEntry: false })).toBeUndefined();
    expect(read("spec/hidden.test.js")).toBe("held out");
    expect(plan.findings.map((f) => f.code).sort()).toEqual([
      "change_outside_deliverables",
      "change_outside_deliverables",
      "protected_path_modified",
      "protected_path_modified",
      "symlink_escapes_workspace",
      "symlink_escapes_workspace",
    ]);
    // Copies: a.js, new.js and the overlay's two files. Links: test, package.json, readme, visible test.
    expect(env).toMatchObject({ files: 8, linked: 4, copied: 4 });
  });

  it("hardlinks unchanged pristine files in link mode and copies carried ones", async () => {
    const { pristineDir, ws, build } = await setup({ deliverables: [], protected: [] });
    writeFileSync(ws("src/a.js"), "a v2");
    const { env } = await build();
    const ino = (p: string) => statSync(p).ino;
    expect(ino(path.join(env.dir, "src/b.js"))).toBe(ino(path.join(pristineDir, "src/b.js")));
    expect(ino(path.join(env.dir, "src/a.js"))).not.toBe(ino(ws("src/a.js")));
    expect(readFileSync(path.join(env.dir, "src/a.js"), "utf8")).toBe("a v2");
  });

  it("shares no inode with pristine in copy mode", async () => {
    const { pristineDir, build } = await setup({ deliverables: [], protected: [] });
    const { env } = await build({ mode: "copy" });
    expect(statSync(path.join(env.dir, "src/b.js")).ino).not.toBe(
      statSync(path.join(pristineDir, "src/b.js")).ino,
    );
    expect(env.linked).toBe(0);
  });

  it("writes the overlay into real directories when the builder swapped its parent for a symlink to outside", async () => {
    const { ws, build } = await setup({ deliverables: [], protected: [] });
    const outside = tmp("lg-outside-");
    rmSync(ws("spec"), { recursive: true });
    symlinkSync(outside, ws("spec"));
    const { env, read, plan, destDir } = await build();
    expect(lstatSync(path.join(env.dir, "spec")).isDirectory()).toBe(true);
    expect(read("spec/hidden.test.js")).toBe("held out");
    expect(readdirSync(outside)).toEqual([]);

    // Defence in depth: even a plan that wrongly carried the escaping link cannot redirect the overlay.
    rmSync(destDir, { recursive: true });
    const spec = (await new WorkspaceObserver(ws("")).observe()).entries.find((e) => e.path === "spec");
    expect(spec?.type).toBe("symlink");
    const leaky = { ...plan, carry: [...plan.carry, spec as NonNullable<typeof spec>], findings: [] };
    const again = await build({ plan: leaky });
    expect(lstatSync(path.join(again.env.dir, "spec")).isDirectory()).toBe(true);
    expect(again.read("spec/hidden.test.js")).toBe("held out");
    expect(readdirSync(outside)).toEqual([]);
  });

  it("overlay wins over an inside symlink planted where a held-out directory or file goes", async () => {
    const { ws, build } = await setup({ deliverables: [], protected: [] });
    rmSync(ws("spec"), { recursive: true });
    symlinkSync("src", ws("spec")); // not escaping, so it is carried
    symlinkSync("a.js", ws("src/expected.json")); // an overlay write here must not land in a.js
    writeFileSync(ws("src/a.js"), "builder's a");
    const { env, read } = await build();
    expect(lstatSync(path.join(env.dir, "spec")).isDirectory()).toBe(true);
    expect(readdirSync(path.join(env.dir, "spec"))).toEqual(["hidden.test.js"]);
    expect(existsSync(path.join(env.dir, "src/hidden.test.js"))).toBe(false);
    expect(lstatSync(path.join(env.dir, "src/expected.json")).isFile()).toBe(true);
    expect(read("src/expected.json")).toBe("[1]");
    expect(read("src/a.js")).toBe("builder's a");
    expect(existsSync(ws("hidden.test.js")) || existsSync(ws("src/hidden.test.js"))).toBe(false);
  });

  it("refuses a carried file that changed after it was observed, and leaves nothing behind", async () => {
    const { ws, pristineDir, workspaceDir, base } = await setup({ deliverables: [], protected: [] });
    writeFileSync(ws("src/a.js"), "a v2");
    const pristine = await new WorkspaceObserver(pristineDir).observe();
    const workspace = await new WorkspaceObserver(workspaceDir).observe();
    const plan = planGateChanges(pristine, workspace, { deliverables: [], protected: [] });
    writeFileSync(ws("src/a.js"), "a v3"); // same size, different content
    const destDir = path.join(base, "env");
    const spec = { pristineDir, pristine, workspaceDir, workspace, plan, destDir, mode: "link" as const };
    const err = await buildGateEnvironment(spec).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InfrastructureError);
    expect(String(err)).toContain(`src/a.js in ${workspaceDir} changed content`);
    expect(existsSync(destDir)).toBe(false);

    renameSync(ws("src/a.js"), ws("src/moved.js"));
    await expect(buildGateEnvironment(spec)).rejects.toThrow(/src\/a\.js .* vanished/);
  });

  it("gives carried files fresh mtimes, whatever the builder set, while pristine files keep theirs", async () => {
    const { pristineDir, ws, build } = await setup({ deliverables: ["src/**"], protected: [] });
    // The pristine tree is old; the builder rewrites src/a.js and forges its mtime back to pristine's,
    // the way a planted cache would need it.
    const old = new Date("2001-02-03T04:05:06Z");
    for (const f of ["src/a.js", "src/b.js"]) utimesSync(path.join(pristineDir, f), old, old);
    writeFileSync(ws("src/a.js"), "a v2");
    utimesSync(ws("src/a.js"), old, old);
    const before = Date.now();
    for (const mode of ["link", "copy"] as const) {
      const destDir = path.join(pristineDir, "..", `env-${mode}`);
      const { env } = await build({ mode, destDir });
      const carried = statSync(path.join(env.dir, "src/a.js"));
      // Filesystem timestamps may be coarser than Date.now(): allow one second below the build start.
      expect(carried.mtimeMs, mode).toBeGreaterThanOrEqual(before - 1000);
      expect(readFileSync(path.join(env.dir, "src/a.js"), "utf8")).toBe("a v2");
      const untouched = statSync(path.join(env.dir, "src/b.js"));
      expect(untouched.mtimeMs, mode).toBe(old.getTime());
      if (mode === "link") expect(untouched.ino).toBe(statSync(path.join(pristineDir, "src/b.js")).ino);
    }
  });

  it("refuses an existing destination", async () => {
    const { build, base } = await setup({ deliverables: [], protected: [] });
    mkdirSync(path.join(base, "env"));
    await expect(build()).rejects.toThrow(/already exists/);
  });
});

// An overlay environment needs root and kernel overlayfs; where a trial overlay cannot be mounted (an
// unprivileged developer's machine) runs never build one, so there is nothing to compare. CI runs as root.
const noOverlay = probeOverlay(tmpdir());
if (noOverlay) console.log(`gate environment: overlay tests skipped, ${noOverlay}`);

describe.skipIf(noOverlay !== null)("an overlay gate environment is the linked one", () => {
  const tmp = useTempDirs();

  // Each scenario changes the run workspace; the overlay built on pristine must equal the linked build.
  const scenarios: Record<string, (ws: (rel: string) => string) => void> = {
    "files changed, added and removed; a protected test and an outside file edited": (ws) => {
      writeFileSync(ws("src/a.js"), "a v2");
      rmSync(ws("src/b.js"));
      writeFileSync(ws("src/new.js"), "new");
      // The text a builder writes to weaken a protected test: a file's content, not a skipped test of this
      // suite (the gate environment must restore the pristine one).
      writeFileSync(ws("test/a.test.js"), "test.skip()");
      writeFileSync(ws("docs/extra.md"), "extra");
    },
    "a file becomes a folder, a folder a file, a folder is removed": (ws) => {
      rmSync(ws("src/b.js"));
      mkdirSync(ws("src/b.js"));
      writeFileSync(ws("src/b.js/inner.js"), "inner");
      rmSync(ws("src/deep"), { recursive: true });
      writeFileSync(ws("src/deep"), "now a file");
      rmSync(ws("src/gone"), { recursive: true });
    },
    "links inside and out, a folder's mode, a mode change on a file": (ws) => {
      symlinkSync("a.js", ws("src/alias.js"));
      symlinkSync("/etc/passwd", ws("src/evil"));
      chmodSync(ws("src/deep"), 0o750);
      chmodSync(ws("src/c.js"), 0o700);
    },
    "a symlink where a held-out folder and file go": (ws) => {
      rmSync(ws("spec"), { recursive: true });
      symlinkSync("src", ws("spec"));
      symlinkSync("a.js", ws("src/expected.json"));
    },
    "nothing changed": () => {},
  };

  for (const [name, change] of Object.entries(scenarios))
    it(name, async () => {
      const base = tmp();
      const pristineDir = path.join(base, "pristine");
      writeTree(pristineDir, {
        ...PRISTINE,
        "src/deep/x/y.js": "y",
        "src/gone/z.js": "z",
      });
      const workspaceDir = path.join(base, "work");
      await copyTree(pristineDir, workspaceDir);
      const heldoutDir = path.join(base, "heldout");
      writeTree(heldoutDir, { "spec/hidden.test.js": "held out", "src/expected.json": "[1]" });
      change((rel) => path.join(workspaceDir, rel));
      const pristine = await new WorkspaceObserver(pristineDir).observe();
      const workspace = await new WorkspaceObserver(workspaceDir).observe();
      const plan = planGateChanges(pristine, workspace, { deliverables: ["src/**"], protected: ["test/**"] });
      const spec = { pristineDir, pristine, workspaceDir, workspace, plan, heldoutDir };
      const trees: Record<string, string> = {};
      for (const mode of ["link", "overlay"] as const) {
        const destDir = path.join(base, `env-${mode}`);
        const env = await buildGateEnvironment({ ...spec, destDir, mode });
        trees[mode] = (await new WorkspaceObserver(env.dir).observe()).id;
        if (mode === "overlay") {
          expect(isOverlayMounted(destDir)).toBe(true);
          // Volatile: thrown away after its gate, its unmount need not sync the store's filesystem.
          const line = readFileSync("/proc/self/mountinfo", "utf8")
            .split("\n")
            .find((l) => l.split(" ")[4] === destDir);
          expect(line).toContain("volatile");
          removeGateEnvironment(destDir);
          expect(existsSync(destDir) || existsSync(`${destDir}.layers`)).toBe(false);
        }
      }
      expect(trees.overlay).toBe(trees.link);
      // The lower layer is never written.
      expect((await new WorkspaceObserver(pristineDir).observe()).id).toBe(pristine.id);
    });

  it("a failed build leaves no mount, no layers and no folder", async () => {
    const base = tmp();
    const pristineDir = path.join(base, "pristine");
    writeTree(pristineDir, PRISTINE);
    const workspaceDir = path.join(base, "work");
    await copyTree(pristineDir, workspaceDir);
    writeFileSync(path.join(workspaceDir, "src/a.js"), "a v2");
    const pristine = await new WorkspaceObserver(pristineDir).observe();
    const workspace = await new WorkspaceObserver(workspaceDir).observe();
    const plan = planGateChanges(pristine, workspace, { deliverables: [], protected: [] });
    writeFileSync(path.join(workspaceDir, "src/a.js"), "a v3");
    const destDir = path.join(base, "env");
    const spec = { pristineDir, pristine, workspaceDir, workspace, plan, destDir, mode: "overlay" as const };
    await expect(buildGateEnvironment(spec)).rejects.toThrow(/changed content/);
    expect(isOverlayMounted(destDir)).toBe(false);
    expect(existsSync(destDir) || existsSync(`${destDir}.layers`)).toBe(false);
  });
});
