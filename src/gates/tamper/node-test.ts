import { readdirSync, statSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import type { PlanInput, RunnerAdapter, TamperPlan } from "./adapter.js";
import { differentLiterals, plausibleName } from "./names.js";
import type { ReportedTest, TestReport } from "./test-report.js";

// Node 20's own discovery rule (lib/internal/test_runner/runner.js): a file is a test file when its
// name matches this pattern, or when it is a .js/.cjs/.mjs file under a folder named `test`.
const TEST_FILE = /((^test(-.+)?)|(.+[.\-_]test))\.[cm]?js$/;
const JS_FILE = /\.[cm]?js$/;
/** Flags that select a subset of tests: a canary could be filtered out, so the run cannot be instrumented. */
const FILTERS = ["--test-name-pattern", "--test-skip-pattern", "--test-only"];

/** The canary's assertion forms: each fails through a different entry point of node:assert. */
function canaryBodies(a: string, b: string): string[] {
  const x = JSON.stringify(a);
  const y = JSON.stringify(b);
  return [
    `assert.strictEqual(${x}, ${y})`,
    `assert.equal(${x}, ${y})`,
    `strict.equal(${x}, ${y})`,
    `assert.deepStrictEqual([${x}], [${y}])`,
    `strict.deepEqual({ v: ${x} }, { v: ${y} })`,
    `assert.ok(${x} === ${y})`,
    `strict.ok(${x} === ${y})`,
    `assert.match(${x}, /^${b.replace(/[^a-z0-9-]/g, "")}$/)`,
    `throw new Error(${x})`,
  ];
}

/**
 * `node --test`: every test file runs in its own child process, so the canary is preloaded into each
 * of them (`--import`, registered after the file's own tests) rather than planted as a file of its own,
 * which the code under test could recognise and spare. Per-test results come from a reporter that runs
 * in the runner's parent process and writes to a file outside the gate environment.
 */
export const nodeTest: RunnerAdapter = {
  id: "node-test",
  channel: "reporter",
  plan(input: PlanInput): TamperPlan | string {
    const argv = [...input.argv];
    const at = argv.indexOf("--test");
    if (at < 0) return "the argv has no --test flag";
    const filter = argv.find((a) => FILTERS.some((f) => a === f || a.startsWith(`${f}=`)));
    if (filter) return `${filter} selects a subset of tests, which could leave loopgate's canary out`;
    const [a, b] = differentLiterals();
    const name = plausibleName(" ");
    const preload = join(input.reportDir, `${plausibleName("-")}.mjs`);
    const reporter = join(input.reportDir, `${plausibleName("-")}.mjs`);
    const reportFile = join(input.reportDir, `${plausibleName("-")}.jsonl`);
    const forms = canaryBodies(a, b).map((body) => `() => { ${body}; }`);
    const token = `${a} !== ${b}`;
    const preloadText = [
      'import assert from "node:assert";',
      'import strict from "node:assert/strict";',
      'import { test } from "node:test";',
      // Only in the runner's children (each runs one test file), once the file's own tests are done. The
      // harness finishes the file in its own beforeExit listener and cancels what is still pending, so it
      // is held back until the canary has run. One test, trying every assertion form: a form that stayed
      // silent was disabled. It carries the file it ran in, since node reports the preload as its location.
      "if (process.env.NODE_TEST_CONTEXT) {",
      "  let planted = false;",
      '  const file = ` [${process.argv[1] ?? ""}]`;',
      `  const forms = [${forms.join(", ")}];`,
      '  process.prependListener("beforeExit", function canary() {',
      "    if (planted) return;",
      "    planted = true;",
      '    const held = process.listeners("beforeExit").filter((l) => l !== canary);',
      '    for (const l of held) process.removeListener("beforeExit", l);',
      "    let restored = false;",
      '    const restore = () => { if (!restored) { restored = true; for (const l of held) process.on("beforeExit", l); } };',
      // Fail closed, not forever: a canary that never gets to run lets the file finish after 10 s.
      "    const fallback = setTimeout(restore, 10000);",
      `    test(${JSON.stringify(name)} + file, () => {`,
      "      clearTimeout(fallback);",
      "      try {",
      "        let silent = 0;",
      "        for (const form of forms) {",
      "          try {",
      "            form();",
      "            silent++;",
      "          } catch {}",
      "        }",
      // Always a failure (a passing test here can be cancelled by the harness); its message says whether
      // every form threw, and only that message counts as the canary failing.
      `        throw new Error(silent === 0 ? ${JSON.stringify(token)} : \`\${silent} silent\`);`,
      "      } finally {",
      "        restore();",
      "      }",
      "    });",
      "  });",
      "}",
      "",
    ].join("\n");
    const userReporters = argv.filter(
      (x) => x === "--test-reporter" || x.startsWith("--test-reporter="),
    ).length;
    const userDests = argv.filter(
      (x) => x === "--test-reporter-destination" || x.startsWith("--test-reporter-destination="),
    ).length;
    const flags = [`--import=${preload}`, "--test"];
    if (userReporters === 0) flags.push("--test-reporter=spec", "--test-reporter-destination=stdout");
    else for (let i = userDests; i < userReporters; i++) flags.push("--test-reporter-destination=stdout");
    flags.push(`--test-reporter=${reporter}`, `--test-reporter-destination=${reportFile}`);
    argv.splice(at, 1, ...flags);
    return {
      runner: "node-test",
      cwd: input.gateEnv,
      argv,
      env: {},
      files: [
        { path: preload, content: preloadText },
        { path: reporter, content: REPORTER },
      ],
      canary: { tests: [name], scope: "each_file", token },
      reportFile,
    };
  },
  parse(_output: string, reportText: string | null, plan: TamperPlan): TestReport | null {
    if (reportText === null) return null;
    const events: NodeEvent[] = [];
    for (const line of reportText.split("\n")) {
      if (!line.trim()) continue;
      try {
        events.push(JSON.parse(line) as NodeEvent);
      } catch {
        return null; // a report the runner's parent wrote is never malformed; someone else wrote this
      }
    }
    if (!events.length) return null;
    const byFile = new Map<string, NodeEvent[]>();
    const canary = new Set(plan.canary.tests);
    for (const e of events) {
      const m = / \[(.*)\]$/.exec(e.name);
      const base = m ? e.name.slice(0, m.index) : null;
      if (m && base !== null && canary.has(base)) {
        e.name = base;
        e.file = m[1] ?? null;
        // The canary always reports a failure; only its own message means every assertion form threw.
        if (!(e.error ?? "").includes(plan.canary.token ?? "\u0000")) e.t = "pass";
      }
      const k = e.file ?? "";
      byFile.set(k, [...(byFile.get(k) ?? []), e]);
    }
    const tests: ReportedTest[] = [];
    const silentFiles: string[] = [];
    for (const [file, list] of byFile) {
      const rel = file ? relativeTo(file, plan) : null;
      // A file that registered no test at all is reported as one pseudo-test named after the file.
      const pseudo = list.length === 1 && list[0]?.name === file;
      if (pseudo) {
        // With the canary preloaded into every child, a file that passed without reporting it ended
        // before its tests ran; one that failed crashed while loading, an ordinary failure.
        if (list[0]?.t === "fail") tests.push({ name: file, file: rel, outcome: "failed" });
        else silentFiles.push(rel ?? file);
        continue;
      }
      list.forEach((e, i) => {
        const prev = list[i - 1];
        const parent = e.kind === "suite" || (prev !== undefined && prev.nesting > e.nesting);
        if (parent) return;
        const outcome = e.t === "fail" ? "failed" : e.skip || e.todo ? "skipped" : "passed";
        tests.push({ name: e.name, file: rel, outcome });
      });
    }
    return { channel: "reporter", tests, silentFiles };
  },
};

interface NodeEvent {
  t: "pass" | "fail";
  name: string;
  file: string | null;
  nesting: number;
  kind?: string;
  skip?: boolean;
  todo?: boolean;
  error?: string;
}

function relativeTo(file: string, plan: TamperPlan): string {
  return relative(plan.cwd, file);
}

/** Test files `node --test` would run from `cwd` with these path arguments (Node 20's rule). */
export function nodeTestFiles(cwd: string, paths: readonly string[]): string[] {
  const out: string[] = [];
  const visit = (p: string, underTest: boolean, supplied: boolean) => {
    let st: ReturnType<typeof statSync>;
    try {
      st = statSync(p);
    } catch {
      return;
    }
    if (st.isFile()) {
      if (supplied || (underTest && JS_FILE.test(p)) || TEST_FILE.test(basename(p))) out.push(p);
    } else if (st.isDirectory()) {
      const name = basename(p);
      if (!supplied && name === "node_modules") return;
      for (const child of readdirSync(p).sort()) visit(join(p, child), underTest || name === "test", false);
    }
  };
  for (const p of paths.length ? paths : ["."]) visit(resolve(cwd, p), false, true);
  return out;
}

// Runs in the runner's parent process: one JSON line per finished test, with its file.
const REPORTER = `export default async function* (source) {
  for await (const event of source) {
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    const d = event.data;
    yield JSON.stringify({
      t: event.type === "test:pass" ? "pass" : "fail",
      name: String(d.name),
      file: d.file ?? null,
      nesting: d.nesting,
      kind: d.details?.type,
      skip: d.skip !== undefined && d.skip !== false,
      todo: d.todo !== undefined && d.todo !== false,
      error: event.type === "test:fail" ? String(d.details?.error?.cause?.message ?? d.details?.error?.message ?? "").slice(0, 500) : undefined,
    }) + "\\n";
  }
}
`;
