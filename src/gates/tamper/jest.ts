import { relative } from "node:path";
import type { PlanInput, PlantedFile, RunnerAdapter, TamperPlan } from "./adapter.js";
import { findOption, type OptionTable, optionValue, positionals, withArgs } from "./js-argv.js";
import { frameworkCanary, frameworkCanaryPath, parseJestJson } from "./js-frameworks.js";
import { widenNameOptions } from "./js-name-filter.js";
import type { PlantedCanary, TestReport } from "./test-report.js";

// Jest's command line (jest-cli's yargs options, camel-cased): booleans, and arrays that take every
// following word. Any other option takes the next word as its value, as yargs reads an unknown one.
const JEST: OptionTable = {
  camelCase: true,
  unknownTakesValue: true,
  value: new Set(["-c", "-w", "-t", "--env"]),
  flag: new Set(
    (
      "all automock bail cache changedFilesWithAncestor ci clearCache clearMocks collectCoverage collectTests " +
      "color colors coverage debug detectLeaks detectOpenHandles errorOnDeprecated expand findRelatedTests " +
      "forceExit injectGlobals json lastCommit listTests logHeapUsage noStackTrace notify onlyChanged " +
      "onlyFailures passWithNoTests randomize resetMocks resetModules restoreMocks runInBand runTestsByPath " +
      "showConfig showSeed silent skipFilter testLocationInResults updateSnapshot useStderr verbose " +
      "waitForUnhandledRejections watch watchAll watchman workerThreads help version"
    )
      .split(" ")
      .map((n) => `--${n}`)
      .concat(["-b", "-e", "-o", "-f", "-i", "-u", "-h", "-v"]),
  ),
  array: new Set(
    (
      "coveragePathIgnorePatterns coverageReporters ignoreProjects moduleDirectories moduleFileExtensions " +
      "modulePathIgnorePatterns modulePaths projects reporters roots selectProjects setupFiles " +
      "setupFilesAfterEnv snapshotSerializers testMatch testPathIgnorePatterns testPathPatterns testRegex " +
      "transformIgnorePatterns unmockedModulePathPatterns watchPathIgnorePatterns"
    )
      .split(" ")
      .map((n) => `--${n}`),
  ),
};

/** Options that stop the run at the first failure (the tests after it never report) or never end it. */
const STOPS = ["--bail", "-b", "--watch", "--watchAll"];
/** Options that pick test files by something other than their paths: a planted canary file might not be among them. */
const PICKS = [
  "--onlyChanged",
  "-o",
  "--changedSince",
  "--lastCommit",
  "--onlyFailures",
  "-f",
  "--findRelatedTests",
  "--shard",
  "--listTests",
];
/** Options that select tests by name. */
const NAMES = ["-t", "--testNamePattern"];
/** Options that keep every test in Jest's own process (the user's choice), or choose when workers are recycled. */
const KEEP_WORKERS = ["-i", "--runInBand", "--detectOpenHandles", "--workerIdleMemoryLimit"];

/**
 * Jest: per-test results from its JSON report, written by the main process to the report pipe. Each
 * test file runs in a worker process (an idle-memory limit makes Jest use workers even for one file),
 * so the code under test does not share the process that writes the report. The canary, when planted,
 * is a test file beside the user's, named like them; with path filters it is named as one more.
 */
export const jest: RunnerAdapter = {
  id: "jest",
  channel: "reporter",
  plan(input: PlanInput): TamperPlan | string {
    const args = input.argv.slice(input.offset);
    const stop = findOption(args, JEST, STOPS);
    if (stop)
      return `${stop} stops the run early or never ends it, so not every test reports; drop it from the gate`;
    if (findOption(args, JEST, ["--outputFile"]))
      return "--outputFile would take the place of the JSON report loopgate reads; drop it from the gate";
    const pathPatterns = optionValue(args, JEST, ["--testPathPatterns"]);
    const filters = [...positionals(args, JEST), ...(pathPatterns === null ? [] : [pathPatterns])];
    const files: PlantedFile[] = [];
    const paths: string[] = [];
    let canary: PlantedCanary | null = null;
    const argv = [...input.argv];
    if (input.canary) {
      const byName = findOption(args, JEST, NAMES);
      if (byName) return `${byName} selects tests by name, so loopgate's canary tests would not run`;
      const picks = findOption(args, JEST, PICKS);
      if (picks) return `${picks} chooses the test files itself, so loopgate's canary file might not run`;
      const path = frameworkCanaryPath(input.gateEnv, filters);
      if (!path) return "no place inside the gate environment for loopgate's canary file";
      const planted = frameworkCanary("jest");
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
    const flags = ["--json", `--outputFile=${input.reportPath}`];
    if (!findOption(args, JEST, KEEP_WORKERS)) flags.push("--workerIdleMemoryLimit=4GB");
    return {
      runner: "jest",
      cwd: input.gateEnv,
      argv: withArgs(argv, input.offset, JEST, flags, paths),
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
