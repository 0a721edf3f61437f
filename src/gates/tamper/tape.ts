import { relative, resolve } from "node:path";
import type { PlanInput, PlantedFile, RunnerAdapter, TamperPlan } from "./adapter.js";
import { type OptionTable, positionals, withArgs } from "./js-argv.js";
import { canaryPath, findTestFiles, isEsModule } from "./js-canary.js";
import { differentLiterals, distinctNames, plausibleName } from "./names.js";
import type { PlantedCanary, ReportedTest, TestReport } from "./test-report.js";

// tape's command line (bin/tape, minimist): --only and --strict are flags, and minimist gives any other
// option the next word, as it does for --require, --ignore and --ignore-pattern.
const TAPE: OptionTable = {
  value: new Set(["-r", "--require", "-i", "--ignore", "--ignore-pattern"]),
  flag: new Set(["--only", "--strict"]),
  unknownTakesValue: true,
};

/** Characters that make a tape argument a glob. */
const GLOB = /[*?[\]{}!]/;

/**
 * tape: no parent process (every test file runs in tape's one process, with the code under test), so
 * the per-test results are read from the TAP it prints: `# name` opens a test, `ok N` / `not ok N`
 * are its assertions. A test passed when it has at least one assertion (not counting `# SKIP`) and
 * none failed; a test with none is skipped (a parent whose assertions are all in its subtests reads
 * the same). tape does not say which file a test came from, so `file` is null and a test's identity is
 * its name. The closing `# tests` / `# pass` / `# fail` lines must agree with the assertions listed,
 * else the output is unreadable. The canary, when planted, is a test file passed as one more argument.
 */
export const tape: RunnerAdapter = {
  id: "tape",
  channel: "summary",
  plan(input: PlanInput): TamperPlan | string {
    const args = input.argv.slice(input.offset);
    const given = positionals(args, TAPE);
    if (!given.length) return "tape was given no test files";
    const files: PlantedFile[] = [];
    const paths: string[] = [];
    let canary: PlantedCanary | null = null;
    if (input.canary) {
      const path = canaryFilePath(input.gateEnv, given);
      if (!path) return "no place inside the gate environment for loopgate's canary file";
      const planted = tapeCanary(isEsModule(path, input.gateEnv));
      files.push({ path, content: planted.content });
      canary = { tests: planted.names, scope: "run" };
      paths.push(relative(input.gateEnv, path));
    }
    return {
      runner: "tape",
      cwd: input.gateEnv,
      argv: withArgs(input.argv, input.offset, TAPE, [], paths),
      env: {},
      files,
      canary,
      reportsToPath: false,
    };
  },
  parse(output: string, _reportText: string | null, _plan: TamperPlan): TestReport | null {
    return parseTap(output);
  },
};

interface TapTest {
  name: string;
  todo: boolean;
  ok: number;
  failed: number;
  skipped: number;
}

const ASSERT = /^(not )?ok \d+\b(.*)$/;

/** tape's TAP as per-test results, or null when its closing counts are missing or disagree with the lines listed. */
export function parseTap(output: string): TestReport | null {
  const lines = output.split(/\r?\n/);
  let planAt = -1;
  lines.forEach((l, i) => {
    if (/^1\.\.\d+$/.test(l)) planAt = i;
  });
  if (planAt < 0) return null;
  const counted = (label: string): number | null => {
    let n: number | null = null;
    for (const l of lines.slice(planAt + 1)) {
      const m = new RegExp(`^# ${label}\\s+(\\d+)$`).exec(l);
      if (m) n = Number(m[1]);
    }
    return n;
  };
  const total = counted("tests");
  const pass = counted("pass");
  const fail = counted("fail") ?? 0;
  if (total === null || pass === null) return null;
  const tests: TapTest[] = [];
  let current: TapTest | null = null;
  let listed = 0;
  let passLines = 0;
  let failLines = 0;
  for (const line of lines.slice(0, planAt)) {
    const header = /^# (.*)$/.exec(line);
    if (header) {
      const text = header[1] ?? "";
      const todo = text.startsWith("TODO ");
      current = { name: todo ? text.slice(5) : text, todo, ok: 0, failed: 0, skipped: 0 };
      tests.push(current);
      continue;
    }
    const a = ASSERT.exec(line);
    if (!a) continue;
    listed++;
    const directive = / # (SKIP|TODO)\b/i.exec(a[2] ?? "")?.[1]?.toUpperCase();
    const failed = a[1] !== undefined && directive !== "TODO";
    if (failed) failLines++;
    else passLines++;
    if (!current) {
      // An assertion before any test header belongs to no test; a failing one still counts.
      current = { name: "(outside any test)", todo: false, ok: 0, failed: 0, skipped: 0 };
      tests.push(current);
    }
    if (directive === "SKIP") current.skipped++;
    else if (failed) current.failed++;
    else if (a[1] === undefined) current.ok++;
  }
  if (listed !== total || passLines !== pass || failLines !== fail) return null;
  const reported: ReportedTest[] = tests.map((t) => ({
    name: t.name,
    suites: [],
    file: null,
    outcome: t.failed > 0 ? "failed" : t.todo || t.ok === 0 ? "skipped" : "passed",
  }));
  return { channel: "summary", tests: reported, silentFiles: [] };
}

/** Beside the first test file the arguments name (a file, the folder of a glob), named like it. */
function canaryFilePath(gateEnv: string, given: readonly string[]): string | null {
  let example: string | null = null;
  for (const g of given) {
    const glob = GLOB.exec(g);
    if (!glob) {
      example = findTestFiles(resolve(gateEnv, g), () => true)[0] ?? null;
    } else {
      // `test/**/*.test.js`: a file in the folder before the first glob character, with the glob's ending.
      const dir = g.slice(0, glob.index).replace(/[^/]*$/, "") || ".";
      const ending = /(\.[A-Za-z0-9]+)+$/.exec(g)?.[0] ?? ".js";
      example = findTestFiles(resolve(gateEnv, dir), (rel) => rel.endsWith(ending), 1)[0] ?? null;
    }
    if (example) break;
  }
  return canaryPath(gateEnv, example, ".", ".js");
}

/** loopgate's canary test file for tape: one test per assertion form (tape's own methods), each of which must report `not ok`. */
function tapeCanary(esm: boolean): { names: string[]; content: string } {
  const [a, b] = differentLiterals();
  const x = JSON.stringify(a);
  const y = JSON.stringify(b);
  const bodies = [
    `t.equal(${x}, ${y})`,
    `t.strictEqual(${x}, ${y})`,
    `t.deepEqual([${x}], [${y}])`,
    `t.same({ v: ${x} }, { v: ${y} })`,
    `t.ok([${x}].includes(${y}))`,
  ];
  const names = distinctNames(bodies.length, () => plausibleName(" "));
  const head = esm ? 'import test from "tape";\n' : 'const test = require("tape");\n';
  const tests = bodies.map(
    (body, i) => `test(${JSON.stringify(names[i])}, (t) => {\n  ${body};\n  t.end();\n});\n`,
  );
  return { names, content: `${head}\n${tests.join("\n")}` };
}
