import { statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { readRegularText } from "../../workspace/safe-read.js";
import type { PlanInput, PlantedFile, RunnerAdapter, TamperPlan } from "./adapter.js";
import { findOption, type OptionTable, optionValue, positionals, withArgs } from "./js-argv.js";
import { canaryPath, findTestFiles } from "./js-canary.js";
import { widenNameOptions } from "./js-name-filter.js";
import { END_MARK_JS, readReportLines } from "./js-report-lines.js";
import { differentLiterals, distinctNames, plausibleName } from "./names.js";
import type { PlantedCanary, ReportedTest, TestReport } from "./test-report.js";

// Mocha's command line (lib/cli/run-option-metadata.cjs): node's parseArgs gives each string, number
// or array option exactly one value; every other option is a flag.
const MOCHA: OptionTable = {
  value: new Set(
    [
      "config fgrep grep package reporter ui slow timeout timeouts retries jobs extension file global globals",
      "ignore exclude node-option reporter-option reporter-options require spec watch-files watch-ignore",
    ]
      .join(" ")
      .split(" ")
      .map((n) => `--${n}`)
      .concat(["-f", "-g", "-R", "-u", "-s", "-t", "-j", "-n", "-O", "-r"]),
  ),
};

/** Options that stop the run early, never end it, or report tests without running them. */
const STOPS = ["--bail", "-b", "--watch", "-w", "--dry-run"];
/** Options that select tests by name. */
const NAMES = ["--grep", "-g", "--fgrep", "-f", "--invert", "-i"];
/** Mocha's config files, read only to see whether they turn on parallel mode. */
const RC_FILES = [
  ".mocharc.js",
  ".mocharc.cjs",
  ".mocharc.yaml",
  ".mocharc.yml",
  ".mocharc.jsonc",
  ".mocharc.json",
];

/** The canary's assertion forms, through node:assert loaded the same way from CommonJS, ES modules and TypeScript. */
function canaryBodies(a: string, b: string): string[] {
  const x = JSON.stringify(a);
  const y = JSON.stringify(b);
  return [
    `assert.strictEqual(${x}, ${y})`,
    `assert.equal(${x}, ${y})`,
    `assert.deepStrictEqual([${x}], [${y}])`,
    `assert.ok([${x}].includes(${y}))`,
    `throw new Error(${x})`,
  ];
}

/**
 * Mocha: per-test results (with the describe blocks each test ran in: Mocha's own title path) from a
 * reporter loopgate puts in the private folder, written to the report pipe when the run ends; it also
 * shows Mocha's spec reporter on stdout. Mocha runs the tests in its own process unless the gate runs
 * it with --parallel, so in serial mode the code under test shares the reporter's process: the
 * planted canary, or mutated twins, are what catches a framework patched from inside. The canary, when
 * planted, is a test file beside the user's, loaded with --file (a spec argument in parallel mode).
 */
export const mocha: RunnerAdapter = {
  id: "mocha",
  channel: "reporter",
  plan(input: PlanInput): TamperPlan | string {
    const args = input.argv.slice(input.offset);
    const reporterSet = findOption(args, MOCHA, ["--reporter", "-R"]);
    if (reporterSet)
      return `${reporterSet}: Mocha runs one reporter, and loopgate's must be it; drop the reporter from the gate`;
    const stop = findOption(args, MOCHA, STOPS);
    if (stop)
      return `${stop} stops the run early, never ends it, or does not run the tests; drop it from the gate`;
    const reporter = join(input.privateDir, `${plausibleName("-")}.cjs`);
    const files: PlantedFile[] = [{ path: reporter, content: REPORTER }];
    const flags = [`--reporter=${reporter}`, `--reporter-option=output=${input.reportPath}`];
    const paths: string[] = [];
    const argv = [...input.argv];
    let canary: PlantedCanary | null = null;
    if (input.canary) {
      const byName = findOption(args, MOCHA, NAMES);
      if (byName) return `${byName} selects tests by name, so loopgate's canary tests would not run`;
      const given = positionals(args, MOCHA);
      const specOption = optionValue(args, MOCHA, ["--spec"]);
      const spec = [...given, ...(specOption === null ? [] : [specOption])];
      const path = canaryFilePath(input.gateEnv, spec.length ? spec : ["test"]);
      if (!path) return "no place inside the gate environment for loopgate's canary file";
      const rel = relative(input.gateEnv, path);
      // --file loads a file whatever the spec says (and Mocha's default spec stays); parallel mode refuses it.
      if (!isParallel(args, input.gateEnv)) flags.push(`--file=${rel}`);
      else if (given.length) paths.push(rel);
      else
        return "Mocha runs in parallel mode here, where loopgate's canary file can only be added beside spec files named on the command line; name them in the gate";
      const planted = mochaCanary();
      files.push({ path, content: planted.content });
      canary = { tests: planted.names, scope: "run" };
    } else if (input.renamed.size) {
      widenNameOptions(argv, input.offset, ["--grep", "-g"], input.renamed, "full");
    }
    return {
      runner: "mocha",
      cwd: input.gateEnv,
      argv: withArgs(argv, input.offset, MOCHA, flags, paths),
      env: {},
      files,
      canary,
      reportsToPath: true,
    };
  },
  parse(_output: string, reportText: string | null, plan: TamperPlan): TestReport | null {
    const rows = readReportLines(reportText) as MochaRow[] | null;
    if (rows === null) return null;
    const tests: ReportedTest[] = [];
    for (const r of rows) {
      const valid =
        (r.t === "pass" || r.t === "fail" || r.t === "skip") &&
        Array.isArray(r.path) &&
        r.path.length > 0 &&
        r.path.every((p) => typeof p === "string") &&
        (r.file === null || typeof r.file === "string");
      if (!valid) return null;
      tests.push({
        name: r.path[r.path.length - 1] ?? "",
        suites: r.path.slice(0, -1),
        file: r.file === null ? null : relative(plan.cwd, r.file),
        outcome: r.t === "pass" ? "passed" : r.t === "fail" ? "failed" : "skipped",
      });
    }
    return { channel: "reporter", tests, silentFiles: [] };
  },
};

interface MochaRow {
  t: "pass" | "fail" | "skip";
  path: string[];
  file: string | null;
}

/** Beside the first test file the spec names (a file, or one in a folder it names), named like it. */
function canaryFilePath(gateEnv: string, spec: readonly string[]): string | null {
  let example: string | null = null;
  for (const s of spec) {
    example = findTestFiles(resolve(gateEnv, s), () => true)[0] ?? null;
    if (example) break;
  }
  let fallback = ".";
  try {
    if (statSync(join(gateEnv, "test")).isDirectory()) fallback = "test";
  } catch {}
  return canaryPath(gateEnv, example, fallback, ".spec.js");
}

/** Whether Mocha runs in parallel mode: on the command line, or in a config file or package.json (read as text). */
function isParallel(args: readonly string[], gateEnv: string): boolean {
  if (findOption(args, MOCHA, ["--parallel", "-p"])) return true;
  const config = optionValue(args, MOCHA, ["--config"]);
  const candidates = [...(config ? [config] : RC_FILES), "package.json"];
  return candidates.some((f) => {
    const p = resolve(gateEnv, f);
    const text = readRegularText(p);
    return text !== null && /["']?\bparallel\b["']?\s*[:=]\s*true\b/.test(text);
  });
}

/** loopgate's canary test file for Mocha: one test per assertion form, with whichever of `it` and `test` the UI defines. */
function mochaCanary(): { names: string[]; content: string } {
  const [a, b] = differentLiterals();
  const bodies = canaryBodies(a, b);
  const names = distinctNames(bodies.length, () => plausibleName(" "));
  const tests = bodies.map(
    (body, i) =>
      `(typeof it === "function" ? it : test)(${JSON.stringify(names[i])}, async function () {\n  const assert = await import("node:assert");\n  ${body};\n});\n`,
  );
  return { names, content: tests.join("\n") };
}

// Runs in Mocha's process. Mocha's own spec reporter keeps the log readable; the report (one line per
// test with its title path and file, then the end mark of readReportLines) is written in one piece
// when the run ends.
const REPORTER = `"use strict";
const fs = require("node:fs");
const { createRequire } = require("node:module");
module.exports = function Report(runner, options) {
  const opts = (options && (options.reporterOption || options.reporterOptions)) || {};
  try {
    const Mocha = createRequire(process.argv[1] || __filename)("mocha");
    new Mocha.reporters.Spec(runner, options);
  } catch {}
  const lines = [];
  const add = (t, test) => {
    const path = typeof test.titlePath === "function" ? test.titlePath() : [String(test.title)];
    lines.push(JSON.stringify({ t, path: path.map(String), file: typeof test.file === "string" ? test.file : null }));
  };
  runner.on("pass", (test) => add("pass", test));
  runner.on("fail", (test) => add("fail", test));
  runner.on("pending", (test) => add("skip", test));
  runner.once("end", () => {
    lines.push(${END_MARK_JS});
    fs.writeFileSync(opts.output, lines.join("\\n") + "\\n");
  });
};
`;
