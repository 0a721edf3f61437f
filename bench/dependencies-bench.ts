// `npm run bench:deps [-- RUNS]`: what a shared dependency folder saves. A task whose workspace holds a
// synthetic node_modules of 10,000 files and a trivial `node --test` gate, run with `loopgate run --oracle`
// (a) with `dependencies: [node_modules]` and (b) without it (the folder copied and observed per run),
// against (c) the bare gate command in the same sandbox, and (d) the same task with no node_modules at all
// (loopgate's own floor per run: CLI start, sandbox self-test, oracle, canary and observations). Prints medians over RUNS runs (default 5) and the
// ratios to the bare command (target for (a): ≤ 1.3×). Needs `npm run build` and bubblewrap.
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { runSandboxed } from "../src/sandbox/bubblewrap.js";
import { scrubbedEnv } from "../src/sandbox/environment.js";

const RUNS = Number(process.argv[2] ?? process.env.BENCH_RUNS ?? 5);
const PACKAGES = 500;
const FILES_PER_PACKAGE = 20;
const BIN = resolve("bin/loopgate.js");

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] ?? 0) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2;
};

/** A task folder whose workspace holds node_modules (PACKAGES × FILES_PER_PACKAGE files) and a test using one. */
function makeTask(root: string, kind: "shared" | "copied" | "none"): string {
  const shared = kind === "shared";
  const dir = join(root, kind);
  const ws = join(dir, "repo");
  mkdirSync(ws, { recursive: true });
  for (let p = 0; p < (kind === "none" ? 0 : PACKAGES); p++) {
    const pkg = join(ws, "node_modules", `pkg-${p}`);
    mkdirSync(join(pkg, "lib"), { recursive: true });
    writeFileSync(join(pkg, "package.json"), `{ "name": "pkg-${p}", "main": "index.js" }\n`);
    writeFileSync(join(pkg, "index.js"), `module.exports = (x) => x + ${p};\n`);
    for (let f = 2; f < FILES_PER_PACKAGE; f++)
      writeFileSync(join(pkg, "lib", `part-${f}.js`), `module.exports = ${f}; // ${"x".repeat(200)}\n`);
  }
  mkdirSync(join(ws, "lib"));
  mkdirSync(join(ws, "test"));
  writeFileSync(join(ws, "lib", "add.js"), "module.exports = (x) => x;\n");
  writeFileSync(
    join(ws, "test", "add.test.js"),
    [
      'const test = require("node:test");',
      'const assert = require("node:assert");',
      'const add = require("../lib/add.js");',
      'test("adds seven", () => assert.strictEqual(add(0), 7));',
      ...(kind === "none"
        ? []
        : ['test("finds a package", () => assert.strictEqual(require("pkg-7")(0), 7));']),
      "",
    ].join("\n"),
  );
  writeFileSync(join(dir, "solution.sh"), "#!/bin/sh\necho 'module.exports = (x) => x + 7;' > lib/add.js\n");
  chmodSync(join(dir, "solution.sh"), 0o755);
  writeFileSync(
    join(dir, "task.yaml"),
    [
      `id: deps-bench-${kind}`,
      "prompt: make add() add seven",
      "workspace: ./repo",
      'deliverables: ["lib/**"]',
      'protected: ["test/**"]',
      ...(shared ? ["dependencies: [node_modules]"] : []),
      "gates:",
      "  - id: unit",
      '    run: ["node", "--test", "test/"]',
      "budget: { attempts: 1 }",
      "oracle: ./solution.sh",
      "",
    ].join("\n"),
  );
  return join(dir, "task.yaml");
}

/** Wall time of one `loopgate run --oracle`, which must end in SUCCESS. */
function timeRun(task: string, store: string): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [BIN, "run", task, "--oracle", "--store", store], {
    encoding: "utf8",
  });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`loopgate run failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return ms;
}

/** Wall time of the bare gate command on the solved workspace, in the same bubblewrap sandbox. */
async function timeBare(ws: string): Promise<number> {
  const t0 = performance.now();
  const r = await runSandboxed(
    {
      argv: ["node", "--test", "test/"],
      cwd: ws,
      writable: [],
      readonly: [ws],
      env: scrubbedEnv({ home: "/tmp" }),
      network: false,
      timeoutMs: 120_000,
    },
    "bubblewrap",
  );
  const ms = performance.now() - t0;
  if (r.exitCode !== 0) throw new Error(`the bare gate command failed:\n${r.output}`);
  return ms;
}

const root = mkdtempSync(join(tmpdir(), "loopgate-deps-bench-"));
try {
  process.stderr.write(`writing two workspaces of ${PACKAGES * FILES_PER_PACKAGE} dependency files …\n`);
  const shared = makeTask(root, "shared");
  const copied = makeTask(root, "copied");
  const none = makeTask(root, "none");
  const solved = join(root, "shared", "repo");
  const store = join(root, "store");
  process.stderr.write("warm-up (the shared copy is made once here) …\n");
  timeRun(shared, store);
  timeRun(copied, store);
  timeRun(none, store);
  writeFileSync(join(solved, "lib", "add.js"), "module.exports = (x) => x + 7;\n");
  await timeBare(solved);
  const times = {
    bare: [] as number[],
    shared: [] as number[],
    copied: [] as number[],
    none: [] as number[],
  };
  for (let i = 0; i < RUNS; i++) {
    process.stderr.write(`round ${i + 1}/${RUNS}\n`);
    times.bare.push(await timeBare(solved));
    writeFileSync(join(solved, "lib", "add.js"), "module.exports = (x) => x;\n");
    times.shared.push(timeRun(shared, store));
    writeFileSync(join(solved, "lib", "add.js"), "module.exports = (x) => x + 7;\n");
    times.copied.push(timeRun(copied, store));
    times.none.push(timeRun(none, store));
  }
  const bare = median(times.bare);
  const row = (name: string, xs: number[]) =>
    `${name.padEnd(44)} ${median(xs).toFixed(0).padStart(7)} ms  ${(median(xs) / bare).toFixed(2)}×`;
  process.stdout.write(
    [
      `median wall time over ${RUNS} runs (${PACKAGES * FILES_PER_PACKAGE} files in node_modules)`,
      row("bare gate command (bubblewrap)", times.bare),
      row("loopgate run --oracle, dependencies shared", times.shared),
      row("loopgate run --oracle, node_modules copied", times.copied),
      row("loopgate run --oracle, no node_modules at all", times.none),
      `shared vs no node_modules at all: ${(median(times.shared) / median(times.none)).toFixed(2)}× (what the 10,000 files still cost)`,
      `copied vs shared: ${(median(times.copied) / median(times.shared)).toFixed(2)}×`,
      "target for the shared run: ≤ 1.3× the bare command",
      "",
    ].join("\n"),
  );
} finally {
  rmSync(root, { recursive: true, force: true });
}
