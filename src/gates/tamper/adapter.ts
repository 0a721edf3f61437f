import type { PlantedCanary, ReportChannel, TestReport } from "./test-report.js";

/** The test runners loopgate recognises in a gate's argv. */
export type RunnerId = "node-test" | "unittest" | "pytest" | "go-test" | "cargo-test" | "vitest" | "jest";

/** A file loopgate writes into the gate environment (or the gate's private report folder) before the run. */
export interface PlantedFile {
  /** Absolute path. */
  path: string;
  content: string;
}

/** How one gate run is instrumented: the argv to run, what to plant, and how to read the result. */
export interface TamperPlan {
  runner: RunnerId;
  /** The gate environment the runner runs in; reported paths are made relative to it. */
  cwd: string;
  argv: string[];
  env: Record<string, string>;
  files: PlantedFile[];
  canary: PlantedCanary;
  /** A report file the runner's parent process writes (absolute), or null when the summary is read from the output. */
  reportFile: string | null;
}

/** What an adapter gets to plan one run. */
export interface PlanInput {
  argv: readonly string[];
  /** How many leading argv words are a launcher (`npx`, `python3 -m`) rather than the runner itself. */
  offset: number;
  gateEnv: string;
  /** A folder private to this gate run, outside the gate environment, mounted into the sandbox. */
  reportDir: string;
}

/** Knowledge of one test runner: how to plant a canary in its idiom and read its per-test results. */
export interface RunnerAdapter {
  id: RunnerId;
  /** Where the per-test results come from, as the README documents it. */
  channel: ReportChannel;
  /** A plan, or a string saying why this run cannot be instrumented (a name filter would hide the canary, …). */
  plan(input: PlanInput): TamperPlan | string;
  /** The report from the run's combined output and the report file's text (null when absent). */
  parse(output: string, reportText: string | null, plan: TamperPlan): TestReport | null;
}
