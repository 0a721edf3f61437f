import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { readRegularText } from "../../workspace/safe-read.js";
import type { PlanInput, RunnerAdapter, TamperPlan } from "./adapter.js";
import { camel, differentLiterals, distinctNames, plausibleName } from "./names.js";
import type { ReportedTest, TestReport } from "./test-report.js";

const REFUSED = ["-run", "-skip", "-failfast", "-list", "-short"];

/** Package folders (relative) under `root` holding `_test.go` files, with the package clause of one of them. */
function testPackages(root: string, rel = ""): { dir: string; pkg: string }[] {
  const abs = rel ? join(root, rel) : root;
  const out: { dir: string; pkg: string }[] = [];
  let names: string[];
  try {
    names = readdirSync(abs).sort();
  } catch {
    return out;
  }
  const testFile = names.find((n) => n.endsWith("_test.go"));
  if (testFile) {
    const pkg = /^package\s+(\w+)/m.exec(readRegularText(join(abs, testFile)) ?? "")?.[1];
    if (pkg) out.push({ dir: rel, pkg });
  }
  for (const n of names) {
    if (n.startsWith(".") || n.startsWith("_") || n === "vendor" || n === "testdata") continue;
    const childRel = rel ? `${rel}/${n}` : n;
    try {
      if (readdirSync(join(root, childRel))) out.push(...testPackages(root, childRel));
    } catch {
      // not a folder
    }
  }
  return out;
}

/**
 * `go test`: one test binary per package, so the canary is planted in every package that has tests,
 * in that package; results come from `go test -json` (test2json, run by the go command around the
 * binary's output).
 */
export const goTest: RunnerAdapter = {
  id: "go-test",
  channel: "summary",
  plan(input: PlanInput): TamperPlan | string {
    const args = input.argv.slice(input.offset);
    const refused = args.find((x) => REFUSED.some((r) => x === r || x.startsWith(`${r}=`)));
    if (refused)
      return `${refused} runs a subset of tests or stops early, which could leave loopgate's canary out`;
    const packages = testPackages(input.gateEnv);
    if (!packages.length) return "no package with _test.go files";
    const [a, b] = differentLiterals();
    const names = distinctNames(3, () => `Test${camel(plausibleName("-"))}`);
    const files = packages.map(({ dir, pkg }) => {
      const path = join(input.gateEnv, dir, `${plausibleName("_")}_test.go`);
      const body = [
        `package ${pkg}`,
        "",
        'import "testing"',
        "",
        `func ${names[0]}(t *testing.T) {`,
        `\tif got, want := ${JSON.stringify(a)}, ${JSON.stringify(b)}; got != want {`,
        '\t\tt.Errorf("got %q, want %q", got, want)',
        "\t}",
        "}",
        "",
        `func ${names[1]}(t *testing.T) {`,
        `\tt.Fatal(${JSON.stringify(a)})`,
        "}",
        "",
        `func ${names[2]}(t *testing.T) {`,
        `\tt.Run(${JSON.stringify(plausibleName("_"))}, func(t *testing.T) { t.Fail() })`,
        "}",
        "",
      ].join("\n");
      return { path, content: body };
    });
    if (files.some((f) => existsSync(f.path))) return "loopgate's canary file would replace an existing file";
    const argv = [...input.argv];
    const at = argv.indexOf("test", input.offset - 1);
    argv.splice(at + 1, 0, "-json");
    return {
      runner: "go-test",
      cwd: input.gateEnv,
      argv,
      env: {},
      files,
      canary: { tests: names as string[], scope: "each_file" },
      reportsToPath: false,
    };
  },
  parse(output: string, _report: string | null, plan: TamperPlan): TestReport | null {
    const tests: ReportedTest[] = [];
    const ran = new Set<string>();
    let any = false;
    const finished = new Map<string, string>();
    for (const line of output.split("\n")) {
      if (!line.startsWith("{")) continue;
      let e: { Action?: string; Package?: string; Test?: string };
      try {
        e = JSON.parse(line) as typeof e;
      } catch {
        continue;
      }
      any = true;
      const pkg = e.Package ?? "";
      if (!e.Test) {
        if (e.Action === "pass" || e.Action === "fail" || e.Action === "skip") finished.set(pkg, e.Action);
        continue;
      }
      if (e.Action === "run") ran.add(`${pkg} ${e.Test}`);
      if (e.Action !== "pass" && e.Action !== "fail" && e.Action !== "skip") continue;
      // Subtests are reported as Parent/child: only leaves count, and a parent is reported after its children.
      const parentOf = e.Test.includes("/") ? e.Test.slice(0, e.Test.lastIndexOf("/")) : null;
      if (parentOf) {
        const i = tests.findIndex((t) => t.file === pkg && t.name === parentOf);
        if (i >= 0) tests.splice(i, 1);
      }
      const isParent = tests.some((t) => t.file === pkg && t.name.startsWith(`${e.Test}/`));
      if (isParent) continue;
      const top = e.Test.split("/")[0] ?? e.Test;
      const name = (plan.canary?.tests ?? []).includes(top) ? top : e.Test;
      tests.push({
        name,
        suites: [],
        file: pkg,
        outcome: e.Action === "pass" ? "passed" : e.Action === "skip" ? "skipped" : "failed",
      });
    }
    if (!any) return null;
    // A package whose binary ended before reporting (os.Exit in the code under test) has tests that ran and never finished.
    const silentFiles = [...new Set([...ran].map((k) => k.split(" ")[0] ?? ""))].filter(
      (pkg) => !finished.has(pkg),
    );
    return { channel: "summary", tests: dedupeCanary(tests, plan), silentFiles };
  },
};

/** A canary's subtest and its parent are one canary test. */
function dedupeCanary(tests: ReportedTest[], plan: TamperPlan): ReportedTest[] {
  const seen = new Set<string>();
  return tests.filter((t) => {
    if (!(plan.canary?.tests ?? []).includes(t.name)) return true;
    const k = `${t.file} ${t.name}`;
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}
