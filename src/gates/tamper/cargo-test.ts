import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { readRegularText } from "../../workspace/safe-read.js";
import type { PlanInput, RunnerAdapter, TamperPlan } from "./adapter.js";
import { differentLiterals, distinctNames, plausibleName } from "./names.js";
import type { ReportedTest, TestReport } from "./test-report.js";

/**
 * `cargo test`: the canary is an integration test (`tests/<name>.rs`, a test binary of its own, built
 * against the crate); `--no-fail-fast` keeps one failing binary from hiding the others. Results are
 * read from each binary's `test … ok` lines and its `test result:` line; a binary that started and
 * never printed its result line ended early (`std::process::exit` in the code under test).
 */
export const cargoTest: RunnerAdapter = {
  id: "cargo-test",
  channel: "summary",
  plan(input: PlanInput): TamperPlan | string {
    const args = input.argv.slice(input.offset);
    const sep = args.indexOf("--");
    const own = sep >= 0 ? args.slice(0, sep) : args;
    const flagsWithValue = new Set([
      "--manifest-path",
      "-p",
      "--package",
      "--features",
      "--target",
      "-j",
      "--jobs",
      "--profile",
    ]);
    const filter = own.find((x, i) => i > 0 && !x.startsWith("-") && !flagsWithValue.has(own[i - 1] ?? ""));
    if (filter)
      return `the test filter ${filter} runs a subset of tests, which could leave loopgate's canary out`;
    if (sep >= 0 && args.slice(sep + 1).some((x) => !x.startsWith("-") || x === "--exact"))
      return "test-binary arguments after -- select a subset of tests";
    const mi = own.indexOf("--manifest-path");
    const manifest = resolve(input.gateEnv, mi >= 0 ? (own[mi + 1] ?? "Cargo.toml") : "Cargo.toml");
    const text = readRegularText(manifest);
    if (text === null) return `no readable ${manifest}`;
    if (/^\s*autotests\s*=\s*false/m.test(text))
      return "the crate sets autotests = false, so a planted integration test would not be built";
    const [a, b] = differentLiterals();
    const names = distinctNames(3, () => plausibleName("_"));
    const path = join(dirname(manifest), "tests", `${plausibleName("_")}.rs`);
    if (existsSync(path)) return `loopgate's canary file ${path} would replace an existing file`;
    const content = [
      "#[test]",
      `fn ${names[0]}() {`,
      `    assert_eq!(${JSON.stringify(a)}, ${JSON.stringify(b)});`,
      "}",
      "",
      "#[test]",
      `fn ${names[1]}() {`,
      `    assert!(${JSON.stringify(a)} == ${JSON.stringify(b)});`,
      "}",
      "",
      "#[test]",
      `fn ${names[2]}() {`,
      `    panic!(${JSON.stringify(a)});`,
      "}",
      "",
    ].join("\n");
    const argv = [...input.argv];
    const at = argv.indexOf("test", input.offset - 1);
    argv.splice(at + 1, 0, "--no-fail-fast");
    return {
      runner: "cargo-test",
      cwd: input.gateEnv,
      argv,
      // The gate environment is read-only: build outside it, in the gate's private /tmp.
      env: { CARGO_TARGET_DIR: `/tmp/${plausibleName("-")}` },
      files: [{ path, content }],
      canary: { tests: names, scope: "run" },
      reportsToPath: false,
    };
  },
  parse(output: string): TestReport | null {
    // Each test binary prints `running N tests`, a line per test and `test result:` on stdout; cargo's
    // `Running …` lines go to stderr and may land anywhere in the combined output, so blocks are read
    // from the stdout lines alone. A block that never reached its result line ended early.
    const tests: ReportedTest[] = [];
    const silentFiles: string[] = [];
    let block = 0;
    let open = false;
    let any = false;
    for (const line of output.split("\n")) {
      if (/^running \d+ tests?$/.test(line.trim())) {
        if (open) silentFiles.push(`test binary ${block}`);
        block++;
        open = true;
        continue;
      }
      const t = /^test (\S+)(?: - should panic)? \.\.\. (ok|FAILED|ignored)/.exec(line);
      if (t) {
        const full = t[1] ?? "";
        tests.push({
          name: full.split("::").pop() ?? full,
          suites: [],
          file: `test binary ${block}`,
          outcome: t[2] === "ok" ? "passed" : t[2] === "ignored" ? "skipped" : "failed",
        });
        continue;
      }
      if (/^test result: (ok|FAILED)\./.test(line)) {
        open = false;
        any = true;
      }
    }
    if (open) silentFiles.push(`test binary ${block}`);
    if (!any) return null;
    return { channel: "summary", tests, silentFiles };
  },
};
