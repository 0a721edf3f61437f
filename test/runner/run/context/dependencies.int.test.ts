// Shared, read-only dependency folders (`dependencies: [node_modules]`): copied once into the store under
// their content digest, mounted (never copied) into the builder's and every gate's bubblewrap sandbox,
// reused while the source folder's stat fingerprint is unchanged, and out of the builder's reach.
import { existsSync, readdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commandBuilder } from "../../../../src/builders/command-builder.js";
import { planGateChanges } from "../../../../src/core/observation/gate-change-plan.js";
import { createObservation } from "../../../../src/core/observation/observation.js";
import { parseTask, protectedGlobs } from "../../../../src/core/task/task.js";
import {
  DEPENDENCY_GRACE_MS,
  dependenciesDir,
  fingerprint,
  recordedDependencies,
  shareDependencies,
  storedDependencies,
} from "../../../../src/runner/run/context/dependencies.js";
import { runPaths } from "../../../../src/runner/run/context/run-context.js";
import { pruneRuns } from "../../../../src/runner/run/prune-runs.js";
import { runTask } from "../../../../src/runner/run/run-task.js";
import { loadTask } from "../../../../src/runner/task-source/load-task.js";
import { SqliteEventStore } from "../../../../src/store/sqlite/sqlite-event-store.js";
import { WorkspaceObserver } from "../../../../src/workspace/observer.js";
import { runTree } from "../../../support/run-tree.js";
import { makeTask } from "../../task-fixture.js";

// lib/app.js must greet through the `greet` package, which only the shared node_modules holds.
const taskYaml = (extra = "") => `id: greeter
prompt: Make lib/app.js export hello(name) using the greet package.
workspace: ./repo
deliverables: ["lib/**"]
protected: ["test/**"]
dependencies: [node_modules]
gates:
  - id: unit
    run: ["node", "test/check.js"]
    timeout: 20s
    feedback: log
budget: { attempts: 1 }
${extra}`;
const repo = {
  "lib/app.js": "module.exports = { hello: () => 'nope' };\n",
  "test/check.js": [
    "const { hello } = require('../lib/app.js');",
    "const out = hello('ada');",
    "if (out !== 'Hello, ada!') { console.log('expected Hello, ada! got ' + out); process.exit(1); }",
    "console.log('ok');",
    "",
  ].join("\n"),
  "node_modules/greet/package.json": '{ "name": "greet", "version": "1.0.0", "main": "index.js" }\n',
  "node_modules/greet/index.js": "module.exports = (n) => `Hello, ${n}!`;\n",
};
const honest = `#!/bin/sh
echo "module.exports = { hello: (n) => require('greet')(n) };" > lib/app.js
echo done
`;

let localDir: string;
let store: SqliteEventStore;
beforeAll(async () => {
  localDir = await mkdtemp(join(tmpdir(), "loopgate-deps-"));
  store = SqliteEventStore.open(join(localDir, "events.db"));
});
afterAll(async () => {
  await store.close();
  await rm(localDir, { recursive: true, force: true });
});

const run = async (file: string, builder: string, dir = localDir, s = store) =>
  runTask({
    loaded: loadTask(file),
    builder: commandBuilder(builder),
    store: s,
    localDir: dir,
    sandbox: "bubblewrap",
  });

describe("shared dependency folders", () => {
  it("mounts node_modules for builder and gate, copies it into no run folder, and reuses one content copy", async () => {
    const dir = await mkdtemp(join(tmpdir(), "loopgate-deps-store-"));
    const s = SqliteEventStore.open(join(dir, "events.db"));
    try {
      const t = await makeTask({ taskYaml: taskYaml(), repo, scripts: { "honest.sh": honest } });
      const first = await run(t.file, t.script("honest.sh"), dir, s);
      expect(first.status, JSON.stringify(first.gates)).toBe("SUCCESS");
      const runDir = join(dir, "runs", first.run_id);
      // The mount point is there, empty; the package is not.
      for (const tree of [runPaths(runDir).pristineDir, await runTree(dir, first.run_id)]) {
        expect(readdirSync(join(tree, "node_modules")), tree).toEqual([]);
      }
      const digests = storedDependencies(dir);
      expect(digests).toHaveLength(1);
      // The digest is the content address of the source folder, computed here independently of the run.
      const copy = join(dependenciesDir(dir), digests[0] ?? "");
      expect(readFileSync(join(copy, "greet", "index.js"), "utf8")).toBe(repo["node_modules/greet/index.js"]);
      const independent = await new WorkspaceObserver(join(t.dir, "repo/node_modules")).observe();
      expect(first.dependencies).toEqual([{ path: "node_modules", digest: independent.id, files: 2 }]);

      const second = await run(t.file, t.script("honest.sh"), dir, s);
      expect(second.status).toBe("SUCCESS");
      expect(second.dependencies).toEqual(first.dependencies);
      expect(storedDependencies(dir)).toEqual(digests);

      // A changed package is a new copy under a new digest; the old one stays for the runs that used it.
      writeFileSync(
        join(t.dir, "repo/node_modules/greet/index.js"),
        "module.exports = (n) => `Hi, ${n}!`;\n",
      );
      const third = await run(t.file, t.script("honest.sh"), dir, s);
      expect(third.status).toBe("ESCALATED");
      expect(third.gates[0]?.log_excerpt).toContain("got Hi, ada!");
      expect(third.dependencies?.[0]?.digest).not.toBe(first.dependencies?.[0]?.digest);
      expect(storedDependencies(dir)).toHaveLength(2);

      // gc: the copy only removed runs named goes (once past its grace after last use); a kept run's stays.
      const later = new Date(Date.now() + 2 * DEPENDENCY_GRACE_MS);
      const prune = (now: Date, dryRun = false) =>
        pruneRuns({ store: s, localDir: dir, policy: { olderThanMs: 0, keep: 1 }, now, dryRun });
      expect((await prune(new Date(), true)).dependencies_removed).toEqual([]);
      expect((await prune(later, true)).dependencies_removed).toHaveLength(1);
      expect(storedDependencies(dir)).toHaveLength(2);
      const gc = await prune(later);
      const oldDigest = first.dependencies?.[0]?.digest ?? "";
      expect(gc.removed.map((r) => r.run_id).sort()).toEqual([first.run_id, second.run_id].sort());
      expect(gc.dependencies_removed).toEqual([oldDigest]);
      expect(storedDependencies(dir)).toEqual([third.dependencies?.[0]?.digest]);
      // The fingerprint of the removed copy is forgotten too: the old content is copied afresh.
      writeFileSync(join(t.dir, "repo/node_modules/greet/index.js"), repo["node_modules/greet/index.js"]);
      const fourth = await run(t.file, t.script("honest.sh"), dir, s);
      expect(fourth.status).toBe("SUCCESS");
      expect(fourth.dependencies?.[0]?.digest).toBe(oldDigest);
      expect(storedDependencies(dir).sort()).toEqual([oldDigest, third.dependencies?.[0]?.digest].sort());
    } finally {
      await s.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("a gate whose program lives in a dependency folder (node_modules/.bin/…) starts from the shared copy", async () => {
    const t = await makeTask({
      taskYaml: taskYaml().replace('run: ["node", "test/check.js"]', 'run: ["node_modules/.bin/check.sh"]'),
      // The runner's launcher, as npm links it: a script in node_modules/.bin (.sh: made executable).
      repo: { ...repo, "node_modules/.bin/check.sh": "#!/bin/sh\nexec node test/check.js\n" },
      scripts: { "honest.sh": honest },
    });
    const r = await run(t.file, t.script("honest.sh"));
    // Before, the program was looked up in the host's gate environment, where node_modules is an empty
    // mount point: spawn_failed, blamed on the work.
    expect(r.status, JSON.stringify(r.gates)).toBe("SUCCESS");
  });

  it("a builder cannot change a dependency: writes fail or vanish, the gate sees the original package", async () => {
    const tamper = `#!/bin/sh
echo "module.exports = { hello: (n) => require('greet')(n) };" > lib/app.js
if echo "module.exports = () => 'Hello, ada!';" > node_modules/greet/index.js; then echo WROTE-PACKAGE; fi
if mkdir -p node_modules/evil 2>/dev/null; then echo WROTE-NEW; fi
mkdir -p node_modules/.vite/deps && echo cached > node_modules/.vite/deps/x.js && echo WROTE-CACHE
if rm -rf node_modules 2>/dev/null; then echo REMOVED; fi
if mv node_modules nm2 2>/dev/null; then echo MOVED; fi
echo "all tests pass"
`;
    const t = await makeTask({ taskYaml: taskYaml(), repo, scripts: { "tamper.sh": tamper } });
    // Stands in for a gate that reads the package's text: the original is still what gates see.
    writeFileSync(
      join(t.dir, "repo/test/check.js"),
      [
        "const fs = require('fs');",
        "const text = fs.readFileSync(require.resolve('greet'), 'utf8');",
        "if (!text.includes('Hello, ${n}!')) { console.log('package changed: ' + text); process.exit(1); }",
        "if (fs.existsSync('node_modules/evil')) { console.log('evil reached the gate'); process.exit(1); }",
        "console.log('original');",
        "",
      ].join("\n"),
    );
    const env = await run(t.file, t.script("tamper.sh"));
    expect(env.status, JSON.stringify(env)).toBe("SUCCESS");
    // What the builder printed: a cache write lands in its private layer; nothing else succeeded.
    const said = env.claims.map((c) => c.text).join("\n");
    expect(said).toContain("WROTE-CACHE");
    for (const word of ["WROTE-PACKAGE", "WROTE-NEW", "REMOVED", "MOVED"]) expect(said).not.toContain(word);
    const ws = await runTree(localDir, env.run_id);
    expect(readdirSync(join(ws, "node_modules"))).toEqual([]);
    expect(existsSync(join(ws, "nm2"))).toBe(false);
    const copy = join(dependenciesDir(localDir), env.dependencies?.[0]?.digest ?? "");
    expect(readFileSync(join(copy, "greet", "index.js"), "utf8")).toBe(repo["node_modules/greet/index.js"]);
    expect(existsSync(join(copy, "evil"))).toBe(false);
    expect(readdirSync(join(copy, ".vite"))).toEqual([]);
    expect(env.findings.filter((f) => f.path?.startsWith("node_modules"))).toEqual([]);
  });

  it("a resume mounts the copies run_started recorded, and fails closed when one is gone", async () => {
    const t = await makeTask({ taskYaml: taskYaml(), repo });
    const [made] = await shareDependencies(join(t.dir, "repo"), ["node_modules"], localDir);
    if (!made) throw new Error("no copy made");
    const record = { path: made.path, digest: made.digest, files: made.files };
    expect(recordedDependencies([record], localDir)).toEqual([made]);
    const gone = { ...record, digest: "0".repeat(64) };
    expect(() => recordedDependencies([gone], localDir)).toThrow(/no longer in the store; start a new run/);
  });

  it("any change at a dependency folder's path is a protected-path violation", () => {
    const task = parseTask(taskYaml(), "task.yaml");
    expect(protectedGlobs(task)).toEqual(["test/**", "node_modules", "node_modules/**"]);
    const dir = { path: "node_modules", type: "dir" as const, mode: 0o755, size: 0, hash: "" };
    const pristine = createObservation([dir]);
    const after = createObservation([
      dir,
      { path: "node_modules/x.js", type: "file", mode: 0o644, size: 1, hash: "a".repeat(64) },
    ]);
    const plan = planGateChanges(pristine, after, {
      deliverables: task.deliverables,
      protected: protectedGlobs(task),
    });
    expect(plan.findings.map((f) => `${f.code}:${f.path}`)).toContain(
      "protected_path_added:node_modules/x.js",
    );
  });

  it("the fingerprint changes with a file's size, mtime, mode or a new name, and not on a re-read", async () => {
    const t = await makeTask({ taskYaml: taskYaml(), repo });
    const nm = join(t.dir, "repo/node_modules");
    const a = fingerprint(nm);
    expect(fingerprint(nm)).toBe(a);
    utimesSync(join(nm, "greet/index.js"), new Date(1_000_000), new Date(2_000_000));
    const b = fingerprint(nm);
    expect(b).not.toBe(a);
    symlinkSync("greet", join(nm, "alias"));
    expect(fingerprint(nm)).not.toBe(b);
  });
});

describe("dependencies in the task file", () => {
  const load = async (extra: string, deps = "[node_modules]", files: Record<string, string> = repo) => {
    const t = await makeTask({ taskYaml: taskYaml(extra).replace("[node_modules]", deps), repo: files });
    return { t, load: () => loadTask(t.file) };
  };

  it("refuses a deliverable glob that reaches into a dependency folder, with file:line:field", async () => {
    const { load: l } = await load("").then(async (x) => {
      writeFileSync(x.t.file, taskYaml().replace('deliverables: ["lib/**"]', 'deliverables: ["**"]'));
      return x;
    });
    expect(l).toThrow(
      /task\.yaml:6: dependencies\[0\]: node_modules is matched by the deliverable glob "\*\*"/,
    );
  });

  it("refuses a missing folder, a symlink, a file, a glob, .. and overlapping folders", async () => {
    const missing = await load("", "[vendor]");
    expect(missing.load).toThrow(/dependencies\[0\]: vendor does not exist in the workspace/);
    const link = await load("", "[nm]");
    symlinkSync("node_modules", join(link.t.dir, "repo/nm"));
    expect(link.load).toThrow(/dependencies\[0\]: nm is a symbolic link/);
    const file = await load("", "[test/check.js]");
    expect(file.load).toThrow(/dependencies\[0\]: test\/check\.js is not a folder/);
    for (const [deps, message] of [
      ['["node_*"]', "is a glob"],
      ['["../x"]', "has an empty, . or .. segment"],
      ['["/abs"]', "is absolute"],
      [
        "[node_modules, node_modules/greet]",
        "node_modules/greet overlaps the dependency folder node_modules",
      ],
    ] as const) {
      const bad = await load("", deps);
      expect(bad.load, deps).toThrow(message);
    }
  });

  it("refuses to run a task with dependencies without the bubblewrap sandbox", async () => {
    const t = await makeTask({ taskYaml: taskYaml(), repo, scripts: { "honest.sh": honest } });
    await expect(
      runTask({
        loaded: loadTask(t.file),
        builder: commandBuilder(t.script("honest.sh")),
        store,
        localDir,
        sandbox: "none",
      }),
    ).rejects.toThrow(/dependencies: .*need|cannot be: run with bubblewrap/);
  });
});
