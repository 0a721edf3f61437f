import { existsSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import type { PlanInput, RunnerAdapter, TamperPlan } from "./adapter.js";
import { camel, differentLiterals, distinctNames, plausibleName } from "./names.js";
import type { ReportedTest, TestReport } from "./test-report.js";

/** The canary's methods for a unittest.TestCase: each fails through a different assertion. */
function testCaseMethods(names: readonly string[], a: string, b: string): string[] {
  const x = JSON.stringify(a);
  const y = JSON.stringify(b);
  const bodies = [
    `self.assertEqual(${x}, ${y})`,
    `self.assertTrue(${x} == ${y})`,
    `self.assertFalse(${x} != ${y})`,
    `self.assertIn(${x}, [${y}])`,
    `self.assertDictEqual({"v": ${x}}, {"v": ${y}})`,
    "with self.assertRaises(ValueError):\n            pass",
    "self.assertAlmostEqual(1.0, 2.0)",
    `self.assertRegex(${x}, "^${b}$")`,
    `assert ${x} == ${y}`,
    `self.fail(${x})`,
  ];
  return names.map((n, i) => `    def ${n}(self):\n        ${bodies[i % bodies.length]}\n`);
}

const CANARY_METHODS = 10;

function canaryModule(className: string, methods: readonly string[], extra = ""): string {
  return `import unittest\n\n\nclass ${className}(unittest.TestCase):\n${methods.join("\n")}${extra}`;
}

/** `-k`, `--lf`, `-x` and the like run a subset or stop at the first failure: the canary could be left out. */
const PYTEST_REFUSED = [
  "-k",
  "-m",
  "--lf",
  "--last-failed",
  "--ff",
  "-x",
  "--exitfirst",
  "--maxfail",
  "--sw",
  "--stepwise",
];

/**
 * `python3 -m unittest`: all test modules load into one process, so one planted module holds the
 * canary; the results are read from unittest's own summary (`Ran N tests`, the FAIL/ERROR blocks)
 * and its verbose lines, which the same process writes.
 */
export const unittest: RunnerAdapter = {
  id: "unittest",
  channel: "summary",
  plan(input: PlanInput): TamperPlan | string {
    const head = input.argv.slice(0, input.offset);
    const args = input.argv.slice(input.offset);
    if (args.includes("-k")) return "-k selects a subset of tests, which could leave loopgate's canary out";
    const stop = args.find((x) => x === "-f" || x === "--failfast");
    if (stop) return `${stop} stops at the first failure, which could leave the real tests unrun`;
    const [a, b] = differentLiterals();
    const methods = distinctNames(CANARY_METHODS, () => `test_${plausibleName("_")}`);
    const className = `${camel(plausibleName("-"))}Test`;
    const content = canaryModule(className, testCaseMethods(methods, a, b));
    const discover = args.length === 0 || args[0] === "discover";
    let argv: string[];
    let path: string;
    if (discover) {
      const rest = args.slice(1);
      const opt = (short: string, long: string, pos: number): string | undefined => {
        const i = rest.findIndex((x) => x === short || x === long);
        if (i >= 0) return rest[i + 1];
        return rest.filter((x, j) => !x.startsWith("-") && !isOptValue(rest, j))[pos];
      };
      const start = opt("-s", "--start-directory", 0) ?? ".";
      const pattern = opt("-p", "--pattern", 1) ?? "test*.py";
      const file = fileForPattern(pattern);
      if (!file)
        return `the discovery pattern ${pattern} is not a simple *-pattern loopgate can name a file for`;
      path = join(resolve(input.gateEnv, start), file);
      argv = [...head, "discover", "-v", ...rest];
    } else {
      const first = args.find((x) => !x.startsWith("-"));
      if (!first) return "no test module named";
      const isPath = first.endsWith(".py") || first.includes("/");
      const dir = isPath ? dirname(first) : first.split(".").slice(0, -1).join("/");
      const mod = `test_${plausibleName("_")}`;
      path = join(resolve(input.gateEnv, dir || "."), `${mod}.py`);
      const name = isPath ? relative(input.gateEnv, path) : [...first.split(".").slice(0, -1), mod].join(".");
      argv = [...head, "-v", ...args, name];
    }
    if (existsSync(path)) return `loopgate's canary file ${path} would replace an existing file`;
    return {
      runner: "unittest",
      cwd: input.gateEnv,
      argv,
      env: {},
      files: [{ path, content }],
      canary: { tests: methods, scope: "run" },
      reportFile: null,
    };
  },
  parse(output: string): TestReport | null {
    const ran = /^Ran (\d+) tests? in [\d.]+s\s*$/m.exec(output);
    const status = /^(OK|FAILED)(?: \(([^)]*)\))?\s*$/m.exec(output.slice(ran?.index ?? 0));
    if (!ran || !status) return null;
    const total = Number(ran[1]);
    const field = (name: string) => Number(new RegExp(`${name}=(\\d+)`).exec(status[2] ?? "")?.[1] ?? 0);
    const failedNames = [...output.matchAll(/^(?:FAIL|ERROR|UNEXPECTED SUCCESS): (\S+) \(([\w.]+)\)/gm)].map(
      (m) => ({ name: m[1] ?? "", file: moduleFile(m[2] ?? "", m[1] ?? "") }),
    );
    const tests: ReportedTest[] = failedNames.map((t) => ({ ...t, outcome: "failed" }));
    const silentFiles: string[] = [];
    const verbose = [...output.matchAll(/^(\S+) \(([\w.]+)\)(?:\n[^\n]*)? \.\.\. (ok|skipped.*)$/gm)];
    for (const m of verbose) {
      const name = m[1] ?? "";
      const qual = m[2] ?? "";
      if (qual.startsWith("unittest.loader.ModuleSkipped.")) {
        silentFiles.push(moduleFile(qual.slice("unittest.loader.ModuleSkipped.".length), null));
        continue;
      }
      tests.push({ name, file: moduleFile(qual, name), outcome: m[3] === "ok" ? "passed" : "skipped" });
    }
    const failed = field("failures") + field("errors") + field("unexpected successes");
    const skipped = field("skipped") + field("expected failures");
    // Passes the verbose lines did not name (output interleaved with the tests' own prints) still count.
    const named = tests.filter((t) => t.outcome === "passed").length;
    for (let i = named; i < total - failed - skipped; i++)
      tests.push({ name: `(unnamed test ${i + 1})`, file: null, outcome: "passed" });
    if (failedNames.length < failed)
      for (let i = failedNames.length; i < failed; i++)
        tests.push({ name: `(unnamed failure ${i + 1})`, file: null, outcome: "failed" });
    return { channel: "summary", tests, silentFiles };
  },
};

function isOptValue(args: readonly string[], j: number): boolean {
  const prev = args[j - 1];
  return prev !== undefined && /^-(s|p|t|-start-directory|-pattern|-top-level-directory)$/.test(prev);
}

/** A file name matching a discovery pattern made of literal text and `*`s. */
function fileForPattern(pattern: string): string | null {
  if (!/^[\w.*-]+$/.test(pattern) || !pattern.endsWith(".py")) return null;
  return pattern.replace(/\*/g, () =>
    pattern.startsWith("*") ? plausibleName("_") : `_${plausibleName("_")}`,
  );
}

/** `tests.test_x.Class.test_y` (3.11) or `tests.test_x.Class` (3.10) → `tests/test_x.py`. */
function moduleFile(qual: string, method: string | null): string {
  const parts = qual.split(".");
  if (method !== null && parts[parts.length - 1] === method) parts.pop();
  if (method !== null && parts.length > 1) parts.pop(); // the class
  return `${parts.join("/")}.py`;
}

/**
 * `pytest` / `python3 -m pytest`: tests run in one process; the canary is a planted module with plain
 * asserts, `pytest.fail` and a unittest.TestCase; results are read from pytest's `-rA` short summary
 * and its final count line, which the same process writes.
 */
export const pytest: RunnerAdapter = {
  id: "pytest",
  channel: "summary",
  plan(input: PlanInput): TamperPlan | string {
    const head = input.argv.slice(0, input.offset);
    const args = input.argv.slice(input.offset);
    const refused = args.find((x) => PYTEST_REFUSED.some((r) => x === r || x.startsWith(`${r}=`)));
    if (refused)
      return `${refused} runs a subset of tests or stops early, which could leave loopgate's canary out`;
    const [a, b] = differentLiterals();
    const x = JSON.stringify(a);
    const y = JSON.stringify(b);
    const fns = distinctNames(5, () => `test_${plausibleName("_")}`);
    const methods = distinctNames(CANARY_METHODS, () => `test_${plausibleName("_")}`);
    const bodies = [
      `assert ${x} == ${y}`,
      `assert ${x} in [${y}]`,
      `assert not (${x} != ${y})`,
      `pytest.fail(${x})`,
      `raise AssertionError(${x})`,
    ];
    const functions = fns.map((n, i) => `def ${n}():\n    ${bodies[i]}\n`).join("\n\n");
    const content = `import unittest\n\nimport pytest\n\n\n${functions}\n\nclass Test${camel(plausibleName("-"))}(unittest.TestCase):\n${testCaseMethods(methods, a, b).join("\n")}`;
    const first = args.find((p) => !p.startsWith("-") && existsSync(resolve(input.gateEnv, p)));
    const isFile = first?.endsWith(".py") ?? false;
    const dir = first ? (isFile ? dirname(first) : first) : ".";
    const path = join(resolve(input.gateEnv, dir), `test_${plausibleName("_")}.py`);
    if (existsSync(path)) return `loopgate's canary file ${path} would replace an existing file`;
    const argv = [...head, ...args, "-rA", "-p", "no:cacheprovider"];
    if (isFile) argv.push(relative(input.gateEnv, path));
    return {
      runner: "pytest",
      cwd: input.gateEnv,
      argv,
      env: {},
      files: [{ path, content }],
      canary: { tests: [...fns, ...methods], scope: "run" },
      reportFile: null,
    };
  },
  parse(output: string): TestReport | null {
    // The count line (`=== 2 passed, 1 failed in 0.1s ===`, bare under -q, absent under -qq) checks
    // the short summary when it is there.
    const final = [
      ...output.matchAll(
        /^(?:=+ )?(\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|deselected)\b.*|no tests ran) in [\d.]+s(?: \([^)]*\))?(?: =+)?\s*$/gm,
      ),
    ].pop();
    const count = (word: string) => Number(new RegExp(`(\\d+) ${word}\\b`).exec(final?.[1] ?? "")?.[1] ?? 0);
    const tests: ReportedTest[] = [];
    for (const m of output.matchAll(/^(PASSED|FAILED|ERROR|XPASS|XFAIL|SKIPPED) (?:\[\d+\] )?(\S+)/gm)) {
      const kind = m[1];
      if (kind === "XFAIL") continue; // an expected failure neither passes nor fails
      const [file, ...rest] = (m[2] ?? "").split("::");
      const name = rest.length ? (rest[rest.length - 1] ?? "").replace(/\[.*$/, "") : (m[2] ?? "");
      const outcome = kind === "PASSED" ? "passed" : kind === "SKIPPED" ? "skipped" : "failed";
      tests.push({ name, file: rest.length ? (file ?? null) : null, outcome });
    }
    if (!final && tests.length === 0) return null;
    const expected = count("passed") + count("failed") + count("errors?") + count("xpassed");
    const seen = tests.filter((t) => t.outcome !== "skipped").length;
    if (seen < expected) {
      // The short summary is the per-test channel; when it lists fewer tests than the count line, it was cut.
      return null;
    }
    return { channel: "summary", tests, silentFiles: [] };
  },
};
