import { existsSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import type { PlanInput, RunnerAdapter, RunnerId, TamperPlan } from "./adapter.js";
import { differentLiterals, distinctNames, plausibleName } from "./names.js";
import type { ReportedTest, TestReport } from "./test-report.js";

const REFUSED = [
  "-t",
  "--testNamePattern",
  "--bail",
  "-b",
  "--onlyChanged",
  "-o",
  "--changed",
  "--shard",
  "--onlyFailures",
  "-f",
  "--related",
  "--findRelatedTests",
];

function isDir(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

/** Vitest and Jest: a planted test file (their own idiom), results from their JSON reporter written by the main process. */
function jsFramework(id: Extract<RunnerId, "vitest" | "jest">): RunnerAdapter {
  return {
    id,
    channel: "reporter",
    plan(input: PlanInput): TamperPlan | string {
      const args = input.argv.slice(input.offset);
      const refused = args.find((x) => REFUSED.some((r) => x === r || x.startsWith(`${r}=`)));
      if (refused)
        return `${refused} runs a subset of tests or stops early, which could leave loopgate's canary out`;
      const positional = args.filter(
        (x, i) => !x.startsWith("-") && !(i === 0 && (x === "run" || x === "test")),
      );
      const notDir = positional.find((p) => !isDir(resolve(input.gateEnv, p)));
      if (notDir) return `the filter ${notDir} is not a folder, so a planted canary file might not match it`;
      const dir = positional[0] ?? (isDir(join(input.gateEnv, "test")) ? "test" : ".");
      const [a, b] = differentLiterals();
      const x = JSON.stringify(a);
      const y = JSON.stringify(b);
      const bodies = [
        `expect(${x}).toBe(${y})`,
        `expect({ v: ${x} }).toEqual({ v: ${y} })`,
        `expect([${x}]).toStrictEqual([${y}])`,
        `expect(${x} === ${y}).toBeTruthy()`,
        `throw new Error(${x})`,
      ];
      const names = distinctNames(bodies.length, () => plausibleName(" "));
      const tests = bodies.map((body, i) => `test(${JSON.stringify(names[i])}, () => {\n  ${body};\n});\n`);
      // Vitest needs its imports; Jest's globals make the file valid as CommonJS and as a module.
      const content =
        id === "vitest" ? `import { expect, test } from "vitest";\n\n${tests.join("\n")}` : tests.join("\n");
      const path = join(
        resolve(input.gateEnv, dir),
        `${plausibleName("-")}.test.${id === "vitest" ? "mjs" : "js"}`,
      );
      if (existsSync(path)) return `loopgate's canary file ${path} would replace an existing file`;
      const reportFile = join(input.reportDir, `${plausibleName("-")}.json`);
      const argv = [...input.argv];
      if (id === "vitest") {
        if (!argv.includes("run") && !argv.includes("--run")) argv.push("--run");
        const hasReporter = argv.some((v) => v === "--reporter" || v.startsWith("--reporter="));
        if (!hasReporter) argv.push("--reporter=default");
        argv.push("--reporter=json", `--outputFile.json=${reportFile}`);
      } else {
        argv.push("--json", `--outputFile=${reportFile}`);
      }
      return {
        runner: id,
        cwd: input.gateEnv,
        argv,
        env: { CI: "true" },
        files: [{ path, content }],
        canary: { tests: names, scope: "run" },
        reportFile,
      };
    },
    parse(_output: string, reportText: string | null, plan: TamperPlan): TestReport | null {
      if (reportText === null) return null;
      let json: {
        testResults?: {
          name?: string;
          status?: string;
          assertionResults?: { title?: string; status?: string }[];
        }[];
      };
      try {
        json = JSON.parse(reportText) as typeof json;
      } catch {
        return null;
      }
      if (!Array.isArray(json.testResults)) return null;
      const tests: ReportedTest[] = [];
      for (const file of json.testResults) {
        const rel = file.name ? relative(plan.cwd, file.name) : null;
        const results = file.assertionResults ?? [];
        // A file that could not load reports no assertions and a failed status: an ordinary failure.
        if (!results.length && file.status === "failed")
          tests.push({ name: rel ?? "(a test file)", file: rel, outcome: "failed" });
        for (const r of results)
          tests.push({
            name: r.title ?? "",
            file: rel,
            outcome: r.status === "passed" ? "passed" : r.status === "failed" ? "failed" : "skipped",
          });
      }
      return { channel: "reporter", tests, silentFiles: [] };
    },
  };
}

export const vitest = jsFramework("vitest");
export const jest = jsFramework("jest");
