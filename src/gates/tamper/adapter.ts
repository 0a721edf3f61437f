import type { PlantedCanary, ReportChannel, TestReport } from "./test-report.js";

/** The test runners loopgate recognises in a gate's argv. */
export type RunnerId =
  | "node-test"
  | "unittest"
  | "pytest"
  | "go-test"
  | "cargo-test"
  | "vitest"
  | "jest"
  | "mocha"
  | "tape";

/** A file loopgate writes before the run: a canary into the gate environment, or a preload or reporter into the private folder. */
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
  /** loopgate's own planted canary, or null when the run has mutated twins instead (PlanInput.canary false). */
  canary: PlantedCanary | null;
  /**
   * True when the runner's parent process writes its per-test report to PlanInput.reportPath (read by
   * loopgate from a pipe); false when the per-test results are read from the run's output.
   */
  reportsToPath: boolean;
}

/** What an adapter gets to plan one run. */
export interface PlanInput {
  argv: readonly string[];
  /** How many leading argv words are a launcher (`npx`, `python3 -m`) rather than the runner itself. */
  offset: number;
  gateEnv: string;
  /**
   * A folder private to this gate run, outside the gate environment, for preloads and reporters. The
   * sandbox mounts it read-only: nothing the code under test can write is later executed or trusted.
   */
  privateDir: string;
  /**
   * Where a reporter in the runner's parent process writes its report: a pipe loopgate reads (`/dev/fd/3`),
   * not a file on any path the sandbox can write.
   */
  reportPath: string;
  /** Plant loopgate's own canary (true), or not because the run carries mutated twins (false). */
  canary: boolean;
  /**
   * Tests renamed for this run (twins): each original test's key (`file::Suite::name`, see testKey) → the
   * keys it is emitted under (the renamed original and its twins). An argv that selects a test by name
   * (`FILE::test_x`, `pkg.mod.Class.test_x`) must select all of them instead.
   */
  renamed: ReadonlyMap<string, readonly string[]>;
}

/** Knowledge of one test runner: how to run it so each test's result is readable, and how to read it. */
export interface RunnerAdapter {
  id: RunnerId;
  /** Where the per-test results come from, as docs/explanation/tamper-checks.md documents it. */
  channel: ReportChannel;
  /** A plan, or a string saying why this run cannot be instrumented (and how to keep the checks). */
  plan(input: PlanInput): TamperPlan | string;
  /** The report from the run's combined output and the reporter's text (null when absent). */
  parse(output: string, reportText: string | null, plan: TamperPlan): TestReport | null;
}
