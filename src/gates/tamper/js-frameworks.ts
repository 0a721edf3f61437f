import { existsSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { canaryPath, findTestFiles } from "./js-canary.js";
import { differentLiterals, distinctNames, plausibleName } from "./names.js";
import type { ReportedTest, TestReport } from "./test-report.js";

/** Jest's and Vitest's matchers in the canary: each test fails through a different one. */
function canaryBodies(a: string, b: string): string[] {
  const x = JSON.stringify(a);
  const y = JSON.stringify(b);
  // No `x === y` of two literals: TypeScript refuses to compare types that cannot overlap, and the
  // canary may be compiled as the user's `.ts` test files are.
  return [
    `expect(${x}).toBe(${y})`,
    `expect({ v: ${x} }).toEqual({ v: ${y} })`,
    `expect([${x}]).toStrictEqual([${y}])`,
    `expect([${x}].includes(${y})).toBeTruthy()`,
    `throw new Error(${x})`,
  ];
}

/** loopgate's canary test file for Jest (globals, valid as CommonJS, ES module and TypeScript) or Vitest (imports). */
export function frameworkCanary(id: "jest" | "vitest"): { names: string[]; content: string } {
  const [a, b] = differentLiterals();
  const bodies = canaryBodies(a, b);
  const names = distinctNames(bodies.length, () => plausibleName(" "));
  const tests = bodies.map((body, i) => `test(${JSON.stringify(names[i])}, () => {\n  ${body};\n});\n`);
  const content =
    id === "vitest" ? `import { expect, test } from "vitest";\n\n${tests.join("\n")}` : tests.join("\n");
  return { names, content };
}

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/**
 * Where the canary file goes: beside the first test file the path filters name (a file, or one inside a
 * folder they name) or, without filters, the first test file of the project, named like it so the
 * runner's own file patterns (`testMatch`, `include`) pick it up. Null when no safe place is found.
 */
export function frameworkCanaryPath(gateEnv: string, filters: readonly string[]): string | null {
  const starts = filters.map((f) => resolve(gateEnv, f)).filter((p) => existsSync(p));
  let example: string | null = null;
  for (const s of starts.length ? starts : [gateEnv]) {
    example = findTestFiles(s)[0] ?? (s === gateEnv ? null : (findTestFiles(s, () => true)[0] ?? null));
    if (example) break;
  }
  const fallback = isDir(join(gateEnv, "test")) ? "test" : ".";
  return canaryPath(gateEnv, example, fallback, ".test.js");
}

interface JestJson {
  numTotalTests?: unknown;
  testResults?: {
    name?: unknown;
    status?: unknown;
    assertionResults?: { ancestorTitles?: unknown; title?: unknown; status?: unknown }[];
  }[];
}

/**
 * A Jest-format JSON report (Jest's `--json`, Vitest's `json` reporter) as per-test results: each test
 * with its describe blocks and its file relative to `cwd`. A file that failed as a whole (it could not
 * load, a hook outside every test failed, its process ended) is one failed entry named after the file.
 * A report that is not well-formed, or whose total disagrees with the tests it lists, is unreadable.
 */
export function parseJestJson(reportText: string | null, cwd: string): TestReport | null {
  if (reportText === null) return null;
  let json: JestJson;
  try {
    json = JSON.parse(reportText) as JestJson;
  } catch {
    return null;
  }
  if (!json || !Array.isArray(json.testResults)) return null;
  const tests: ReportedTest[] = [];
  for (const file of json.testResults) {
    if (typeof file?.name !== "string") return null;
    const rel = relative(cwd, file.name);
    const results = file.assertionResults ?? [];
    if (!Array.isArray(results)) return null;
    for (const r of results) {
      const suites = r.ancestorTitles ?? [];
      if (typeof r.title !== "string" || !Array.isArray(suites) || suites.some((s) => typeof s !== "string"))
        return null;
      tests.push({
        name: r.title,
        suites: suites as string[],
        file: rel,
        outcome: r.status === "passed" ? "passed" : r.status === "failed" ? "failed" : "skipped",
      });
    }
    const anyFailed = results.some((r) => r.status === "failed");
    if (file.status === "failed" && !anyFailed)
      tests.push({ name: rel, suites: [], file: rel, outcome: "failed" });
  }
  const listed = json.testResults.reduce((n, f) => n + (f.assertionResults?.length ?? 0), 0);
  if (typeof json.numTotalTests === "number" && json.numTotalTests !== listed) return null;
  return { channel: "reporter", tests, silentFiles: [] };
}

/**
 * A line for the gate's summary when a run failed because it tried to write into the read-only gate
 * environment (EROFS in its output), or null. The log is the user's own; this says what would help.
 */
export function readOnlyHint(output: string): string | null {
  if (!/\bEROFS\b|read-only file system/.test(output)) return null;
  return "the run tried to write into the gate environment, which is read-only; `writable: true` on the gate lets it";
}
