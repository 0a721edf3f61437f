/** What one gate run's test runner reported, read by loopgate rather than trusted from the exit code. */
export type TestOutcome = "passed" | "failed" | "skipped";

/** One reported test (a leaf: suites and parents of subtests are not counted). */
export interface ReportedTest {
  name: string;
  /**
   * The names enclosing it, outermost first: a class, describe blocks, a parent test. With the file and
   * the name they make the test's identity (testKey(file, [...suites, name])). Empty when there are none.
   */
  suites: string[];
  /** The file it came from (relative to the gate environment, `/`-separated), when the runner says. */
  file: string | null;
  outcome: TestOutcome;
}

/** Where the per-test results came from: a reporter written by the runner's parent process, or the runner's own summary. */
export type ReportChannel = "reporter" | "summary";

export interface TestReport {
  channel: ReportChannel;
  tests: ReportedTest[];
  /**
   * Test files that hold test definitions but reported no test at all (they ended early, or were
   * skipped as a whole when imported): their tests cannot be counted, so the run cannot vouch for them.
   */
  silentFiles: string[];
}

/** The canary loopgate planted in this gate run: tests that must all fail if the framework still reports failures. */
export interface PlantedCanary {
  /** Test names, each unique to this gate run. */
  tests: string[];
  /**
   * `run`: planted once, every canary test must report a failure somewhere in the run. `each_file`:
   * preloaded into every test file's process, so every file that reported tests must report each one failed.
   */
  scope: "run" | "each_file";
  /** For runners whose canary always reports a failure: the message that means every assertion in it failed. */
  token?: string;
}

/** The tests a run must pass to be believed: at least `min` real tests. */
export interface TestFloor {
  min: number;
  source: "declared" | "task_check" | "default";
}

/** What loopgate concluded from the report; `error` null and `passed` true only when everything holds. */
export interface TestVerdict {
  passed: boolean;
  error: "tampered" | "too_few_tests" | "unreadable" | null;
  summary: string;
  counts: { passed: number; failed: number; skipped: number };
}

/**
 * Decides a test run from loopgate's own reading of it. Passed only when the report is readable,
 * every planted canary test failed (and the runner said so by exiting non-zero), no real test failed,
 * no test file went silent, and at least `floor.min` real tests passed. A canary that passed or never
 * reported means the framework in that environment does not report failures: tampered.
 */
export function judgeTestRun(input: {
  report: TestReport | null;
  canary: PlantedCanary | null;
  floor: TestFloor;
  exitCode: number;
}): TestVerdict {
  const { report, canary, floor, exitCode } = input;
  const empty = { passed: 0, failed: 0, skipped: 0 };
  if (!report)
    return {
      passed: false,
      error: "unreadable",
      summary: "the test runner's per-test results could not be read, so the run cannot be believed",
      counts: empty,
    };
  const canaryNames = new Set(canary?.tests ?? []);
  const real = report.tests.filter((t) => !canaryNames.has(t.name));
  const counts = {
    passed: real.filter((t) => t.outcome === "passed").length,
    failed: real.filter((t) => t.outcome === "failed").length,
    skipped: real.filter((t) => t.outcome === "skipped").length,
  };
  if (canary) {
    const problem = canaryProblem(report, canary);
    if (problem) return { passed: false, error: "tampered", summary: problem, counts };
    if (exitCode === 0)
      return {
        passed: false,
        error: "tampered",
        summary:
          "the runner exited 0 although loopgate's canary tests failed: its exit status does not report failures",
        counts,
      };
  }
  if (counts.failed > 0)
    return { passed: false, error: null, summary: `${counts.failed} test(s) failed`, counts };
  if (!canary && exitCode !== 0)
    return { passed: false, error: null, summary: "the runner reported a failure", counts };
  if (report.silentFiles.length)
    return {
      passed: false,
      error: "too_few_tests",
      summary: `test file ${report.silentFiles[0]}${report.silentFiles.length > 1 ? ` (and ${report.silentFiles.length - 1} more)` : ""} defines tests but reported none: it ended early or was skipped as a whole`,
      counts,
    };
  if (counts.passed < floor.min)
    return {
      passed: false,
      error: "too_few_tests",
      summary: `${counts.passed} test(s) passed, fewer than the floor of ${floor.min} (${floorSource(floor)})`,
      counts,
    };
  return { passed: true, error: null, summary: `passed (${counts.passed} tests)`, counts };
}

function floorSource(f: TestFloor): string {
  if (f.source === "declared") return "gates[].min_tests";
  if (f.source === "task_check") return "the count the oracle reached in loopgate task check";
  return "the default";
}

/** Why the planted canary does not vouch for this run, or null when every canary test failed where it had to. */
export function canaryProblem(report: TestReport, canary: PlantedCanary): string | null {
  const names = new Set(canary.tests);
  const groups = new Map<string, ReportedTest[]>();
  for (const t of report.tests) {
    const key = canary.scope === "each_file" ? (t.file ?? "") : "";
    groups.set(key, [...(groups.get(key) ?? []), t]);
  }
  if (!groups.size) groups.set("", []);
  for (const [file, tests] of groups) {
    const where = canary.scope === "each_file" && file ? ` in ${file}` : "";
    const seen = tests.filter((t) => names.has(t.name));
    const missing = canary.tests.filter((n) => !seen.some((t) => t.name === n));
    if (missing.length)
      return `loopgate's canary tests never reported${where} (${missing.length} of ${canary.tests.length}): the run ended early or the framework was replaced`;
    const notFailed = seen.filter((t) => t.outcome !== "failed");
    if (notFailed.length)
      return `loopgate's canary tests did not fail${where} (${notFailed.length} of ${seen.length}): the test framework does not report failures here`;
  }
  return null;
}
