import { existsSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import type { PlanInput, PlantedFile, RunnerAdapter, TamperPlan } from "./adapter.js";
import { findOption, type OptionTable, optionValue, readArgs, withArgs } from "./js-argv.js";
import { frameworkCanary, frameworkCanaryPath, parseJestJson } from "./js-frameworks.js";
import { widenNameOptions } from "./js-name-filter.js";
import type { PlantedCanary, TestReport } from "./test-report.js";

// Vitest's command line (`vitest --help`): the options written with `<value>` or `[value]`. cac gives
// an optional value the next word too (`-u test/x` updates snapshots "test/x"), so both take one.
const VITEST: OptionTable = {
  camelCase: true,
  value: new Set([
    "-r",
    "--root",
    "-c",
    "--config",
    "-u",
    "--update",
    "-t",
    "--testNamePattern",
    "--dir",
    "--api",
    "--silent",
    "--reporter",
    "--outputFile",
    "--mode",
    "--browser",
    "--pool",
    "--execArgv",
    "--vmMemoryLimit",
    "--maxWorkers",
    "--environment",
    "--shard",
    "--changed",
    "--sequence",
    "--inspect",
    "--inspectBrk",
    "--testTimeout",
    "--hookTimeout",
    "--bail",
    "--retry",
    "--diff",
    "--exclude",
    "--project",
    "--slowTestThreshold",
    "--teardownTimeout",
    "--maxConcurrency",
    "--attachmentsDir",
    "--configLoader",
    "--mergeReports",
    "--listTags",
    "--tagsFilter",
    "--experimental",
  ]),
};

/** Vitest's subcommands, read from the first positional word. */
const COMMANDS = new Set(["run", "watch", "dev", "related", "bench", "list", "init"]);
/** Options that stop the run at the first failures (the tests after them never report) or never end it. */
const STOPS = ["--bail", "--watch", "-w"];
/** Options that pick test files by something other than their paths, or by test name: a planted canary might not run. */
const PICKS = ["--changed", "--shard", "--project", "--tagsFilter"];
const NAMES = ["-t", "--testNamePattern"];
/** The config files Vitest looks for in its root, in its own order. */
const CONFIGS = ["vitest.config", "vite.config"].flatMap((b) =>
  [".ts", ".mts", ".cts", ".js", ".mjs", ".cjs"].map((e) => `${b}${e}`),
);

/**
 * Vitest: per-test results from its JSON reporter, written by the main process (the test files run in
 * its worker processes unless the gate picks a thread pool) to the report pipe. A config file is loaded
 * with `--configLoader runner`, which does not write a bundled copy beside it: the gate environment is
 * read-only. The canary, when planted, is a test file beside the user's, named like them; with path
 * filters it is named as one more.
 */
export const vitest: RunnerAdapter = {
  id: "vitest",
  channel: "reporter",
  plan(input: PlanInput): TamperPlan | string {
    const args = input.argv.slice(input.offset);
    const words = readArgs(args, VITEST).filter((w) => w.kind === "positional");
    const first = words[0] ? (args[words[0].index] ?? "") : "";
    const command = COMMANDS.has(first) ? first : null;
    if (command && command !== "run" && command !== "related")
      return `vitest ${command} does not run the tests once and report them; use vitest run`;
    const filters = words.slice(command ? 1 : 0).map((w) => args[w.index] ?? "");
    const stop = findOption(args, VITEST, STOPS);
    if (stop)
      return `${stop} stops the run early or never ends it, so not every test reports; drop it from the gate`;
    if (findOption(args, VITEST, ["--outputFile"]))
      return "--outputFile would take the place of the JSON report loopgate reads; drop it from the gate";
    const files: PlantedFile[] = [];
    const paths: string[] = [];
    let canary: PlantedCanary | null = null;
    const argv = [...input.argv];
    if (input.canary) {
      const byName = findOption(args, VITEST, NAMES);
      if (byName) return `${byName} selects tests by name, so loopgate's canary tests would not run`;
      const picks = findOption(args, VITEST, PICKS) ?? (command === "related" ? "vitest related" : null);
      if (picks) return `${picks} chooses the test files itself, so loopgate's canary file might not run`;
      const path = frameworkCanaryPath(input.gateEnv, filters);
      if (!path) return "no place inside the gate environment for loopgate's canary file";
      const planted = frameworkCanary("vitest");
      files.push({ path, content: planted.content });
      canary = { tests: planted.names, scope: "run" };
      if (filters.length) paths.push(relative(input.gateEnv, path));
    } else if (input.renamed.size) {
      widenNameOptions(
        argv,
        input.offset,
        ["-t", "--testNamePattern", "--test-name-pattern"],
        input.renamed,
        "full",
      );
    }
    const flags: string[] = [];
    if (!command && !findOption(args, VITEST, ["--run"])) flags.push("--run");
    if (!findOption(args, VITEST, ["--reporter"])) flags.push("--reporter=default");
    flags.push("--reporter=json", `--outputFile.json=${input.reportPath}`);
    if (!findOption(args, VITEST, ["--configLoader"]) && hasConfig(args, input.gateEnv))
      flags.push("--configLoader=runner");
    return {
      runner: "vitest",
      cwd: input.gateEnv,
      argv: withArgs(argv, input.offset, VITEST, flags, paths),
      env: { CI: "true" },
      files,
      canary,
      reportsToPath: true,
    };
  },
  parse(_output: string, reportText: string | null, plan: TamperPlan): TestReport | null {
    return parseJestJson(reportText, plan.cwd);
  },
};

/** Whether the run loads a config file: one named by --config, or one Vitest finds in its root. */
function hasConfig(args: readonly string[], gateEnv: string): boolean {
  if (optionValue(args, VITEST, ["-c", "--config"]) !== null) return true;
  const root = resolve(gateEnv, optionValue(args, VITEST, ["-r", "--root"]) ?? ".");
  return CONFIGS.some((c) => existsSync(join(root, c)));
}
