import { readdirSync, statSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import type { PlanInput, PlantedFile, RunnerAdapter, TamperPlan } from "./adapter.js";
import { widenNameOptions } from "./js-name-filter.js";
import { END_MARK_JS, readReportLines } from "./js-report-lines.js";
import { differentLiterals, plausibleName } from "./names.js";
import type { PlantedCanary, ReportedTest, TestReport } from "./test-report.js";

// Node 20's own discovery rule (lib/internal/test_runner/runner.js): a file is a test file when its
// name matches this pattern, or when it is a .js/.cjs/.mjs file under a folder named `test`.
const TEST_FILE = /((^test(-.+)?)|(.+[.\-_]test))\.[cm]?js$/;
const JS_FILE = /\.[cm]?js$/;
/** Flags that select a subset of tests: a planted canary could be filtered out, so such a run plants none. */
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
 * `node --test`: every test file runs in its own child process, so the canary (when this run plants
 * one) is preloaded into each of them (`--import`, registered after the file's own tests) rather than
 * planted as a file of its own, which the code under test could recognise and spare. Per-test results
 * come from a reporter in the runner's parent process, written to the report pipe: the children's
 * code cannot reach the parent's objects, only the events node passes up from them, and what it writes
 * into the pipe itself makes the report unreadable (see readReportLines).
 */
export const nodeTest: RunnerAdapter = {
  id: "node-test",
  channel: "reporter",
  plan(input: PlanInput): TamperPlan | string {
    const argv = [...input.argv];
    const at = argv.indexOf("--test");
    if (at < 0) return "the argv has no --test flag";
    const watch = argv.find((a) => a === "--watch" || a.startsWith("--watch-path"));
    if (watch) return `${watch} never ends the run; drop it from the gate`;
    const filterAt = argv.findIndex((a) => FILTERS.some((f) => a === f || a.startsWith(`${f}=`)));
    const filter = filterAt >= 0 ? argv[filterAt] : undefined;
    if (filter && input.canary)
      return `${filter} selects a subset of tests, which could leave loopgate's canary out`;
    if (filter && input.renamed.size)
      widenNameOptions(argv, 0, ["--test-name-pattern"], input.renamed, "name");
    const reporter = join(input.privateDir, `${plausibleName("-")}.mjs`);
    const files: PlantedFile[] = [{ path: reporter, content: REPORTER }];
    const flags: string[] = [];
    let canary: PlantedCanary | null = null;
    if (input.canary) {
      const preload = join(input.privateDir, `${plausibleName("-")}.mjs`);
      const planted = canaryPreload();
      files.push({ path: preload, content: planted.text });
      flags.push(`--import=${preload}`);
      canary = { tests: [planted.name], scope: "each_file", token: planted.token };
    }
    // Node pairs the n-th --test-reporter with the n-th destination: the user's reporters keep theirs
    // (stdout when they named none) and loopgate's comes last, with the report pipe.
    const user = takeReporters(argv);
    flags.push("--test");
    const reporters = user.reporters.length ? user.reporters : ["spec"];
    reporters.forEach((r, i) => {
      flags.push(`--test-reporter=${r}`, `--test-reporter-destination=${user.destinations[i] ?? "stdout"}`);
    });
    flags.push(`--test-reporter=${reporter}`, `--test-reporter-destination=${input.reportPath}`);
    argv.splice(argv.indexOf("--test"), 1, ...flags);
    return { runner: "node-test", cwd: input.gateEnv, argv, env: {}, files, canary, reportsToPath: true };
  },
  parse(_output: string, reportText: string | null, plan: TamperPlan): TestReport | null {
    const rows = readReportLines(reportText);
    if (rows === null) return null;
    const events = rows as unknown as NodeEvent[];
    if (!events.length || events.some((e) => !validEvent(e))) return null;
    const byFile = new Map<string, NodeEvent[]>();
    const canary = new Set(plan.canary?.tests ?? []);
    for (const e of events) {
      const m = / \[(.*)\]$/.exec(e.name);
      const base = m ? e.name.slice(0, m.index) : null;
      if (plan.canary && m && base !== null && canary.has(base) && e.nesting === 0) {
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
      const rel = file ? relative(plan.cwd, file) : null;
      // A file that registered no test at all is reported as one pseudo-test named after the file.
      const pseudo = list.length === 1 && list[0]?.name === file;
      if (pseudo) {
        // One that failed crashed while loading: an ordinary failure. One that passed registered no
        // test: with the canary preloaded into every child it ended before its tests ran; without one
        // it is left to the identities recorded by loopgate task check (a helper file reads the same).
        if (list[0]?.t === "fail")
          tests.push({ name: rel ?? file, suites: [], file: rel, outcome: "failed" });
        else if (plan.canary) silentFiles.push(rel ?? file);
        continue;
      }
      for (const e of list) {
        const outcome = e.t === "fail" ? "failed" : e.skip || e.todo ? "skipped" : "passed";
        // Suites and parent tests are not tests of their own, unless they failed for a reason of their
        // own (a hook, code after the subtests) rather than because a subtest failed.
        const container = e.kind === "suite" || e.parent;
        if (container && !(e.t === "fail" && e.failureType !== "subtestsFailed")) continue;
        tests.push({ name: e.name, suites: e.suites, file: rel, outcome });
      }
    }
    return { channel: "reporter", tests, silentFiles };
  },
};

/** Removes the user's --test-reporter and --test-reporter-destination options from argv, returning their values in order. */
function takeReporters(argv: string[]): { reporters: string[]; destinations: string[] } {
  const out = { reporters: [] as string[], destinations: [] as string[] };
  for (let i = 0; i < argv.length; ) {
    const a = argv[i] ?? "";
    const m = /^--test-reporter(-destination)?(=(.*))?$/.exec(a);
    if (!m) {
      i++;
      continue;
    }
    const value = m[2] !== undefined ? (m[3] ?? "") : (argv[i + 1] ?? "");
    (m[1] ? out.destinations : out.reporters).push(value);
    argv.splice(i, m[2] !== undefined ? 1 : 2);
  }
  return out;
}

/** The preload that registers the canary test in every test file's process, with its name and the message that means every form failed. */
function canaryPreload(): { name: string; token: string; text: string } {
  const [a, b] = differentLiterals();
  const name = plausibleName(" ");
  const forms = canaryBodies(a, b).map((body) => `() => { ${body}; }`);
  const token = `${a} !== ${b}`;
  const text = [
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
  return { name, token, text };
}

interface NodeEvent {
  t: "pass" | "fail";
  name: string;
  /** The enclosing describe blocks and parent tests, outermost first (tracked by the reporter). */
  suites: string[];
  /** Whether subtests started inside it: a parent, not a test of its own. */
  parent: boolean;
  file: string | null;
  nesting: number;
  kind?: string;
  skip?: boolean;
  todo?: boolean;
  error?: string;
  failureType?: string;
}

function validEvent(e: NodeEvent): boolean {
  return (
    (e.t === "pass" || e.t === "fail") &&
    typeof e.name === "string" &&
    Array.isArray(e.suites) &&
    e.suites.every((s) => typeof s === "string") &&
    typeof e.nesting === "number" &&
    (e.file === null || typeof e.file === "string")
  );
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

// Runs in the runner's parent process: one JSON line per finished test, with its file and the names of
// the tests and suites it ran in, written with the end mark when the run ends (see readReportLines).
// Node reports a test's start right before its result, nested inside its parents' (files run in
// parallel, so each file keeps its own stack).
const REPORTER = `export default async function* (source) {
  const stacks = new Map();
  const lines = [];
  for await (const event of source) {
    const d = event.data ?? {};
    const file = d.file ?? "";
    const stack = stacks.get(file) ?? [];
    stacks.set(file, stack);
    if (event.type === "test:start") {
      stack.length = Math.min(stack.length, d.nesting);
      const up = stack[d.nesting - 1];
      if (up) up.children = true;
      stack.push({ name: String(d.name), children: false });
      continue;
    }
    if (event.type !== "test:pass" && event.type !== "test:fail") continue;
    const own = stack[d.nesting];
    const name = String(d.name);
    const suites = stack.slice(0, d.nesting).map((f) => f.name);
    const parent = own !== undefined && own.name === name && own.children;
    stack.length = Math.min(stack.length, d.nesting);
    const error = d.details?.error;
    lines.push(JSON.stringify({
      t: event.type === "test:pass" ? "pass" : "fail",
      name,
      suites,
      parent,
      file: d.file ?? null,
      nesting: d.nesting,
      kind: d.details?.type,
      skip: d.skip !== undefined && d.skip !== false,
      todo: d.todo !== undefined && d.todo !== false,
      error: event.type === "test:fail" ? String(error?.cause?.message ?? error?.message ?? "").slice(0, 500) : undefined,
      failureType: event.type === "test:fail" ? String(error?.failureType ?? "") : undefined,
    }));
  }
  yield [...lines, ${END_MARK_JS}].join("\\n") + "\\n";
}
`;
