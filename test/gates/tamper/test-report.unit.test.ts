import fc from "fast-check";
import { describe, expect, test } from "vitest";
import {
  judgeTestRun,
  type PlantedCanary,
  type ReportedTest,
  type TestReport,
} from "../../../src/gates/tamper/test-report.js";

const floor = { min: 1, source: "default" as const };
const canary: PlantedCanary = { tests: ["c1", "c2"], scope: "run" };
const t = (
  name: string,
  outcome: ReportedTest["outcome"],
  file: string | null = "a.test.js",
): ReportedTest => ({
  name,
  suites: [],
  file,
  outcome,
});
const report = (tests: ReportedTest[], silentFiles: string[] = []): TestReport => ({
  channel: "reporter",
  tests,
  silentFiles,
});

describe("judgeTestRun", () => {
  test("passes when every real test passed, every canary test failed and the runner exited non-zero", () => {
    const v = judgeTestRun({
      report: report([t("a", "passed"), t("c1", "failed"), t("c2", "failed")]),
      canary,
      floor,
      exitCode: 1,
    });
    expect(v).toMatchObject({ passed: true, error: null, counts: { passed: 1, failed: 0, skipped: 0 } });
  });

  test("no report at all is unreadable, never a pass", () => {
    expect(judgeTestRun({ report: null, canary, floor, exitCode: 0 })).toMatchObject({
      passed: false,
      error: "unreadable",
    });
  });

  test("a canary test that passed means the framework does not report failures: tampered", () => {
    const v = judgeTestRun({
      report: report([t("a", "passed"), t("c1", "passed"), t("c2", "failed")]),
      canary,
      floor,
      exitCode: 1,
    });
    expect(v).toMatchObject({ passed: false, error: "tampered" });
  });

  test("a canary test that never reported means the run ended early: tampered", () => {
    const v = judgeTestRun({
      report: report([t("a", "passed"), t("c1", "failed")]),
      canary,
      floor,
      exitCode: 1,
    });
    expect(v).toMatchObject({ passed: false, error: "tampered" });
    expect(v.summary).toContain("never reported");
  });

  test("exit 0 although the canary failed means the exit status was forged: tampered", () => {
    const v = judgeTestRun({
      report: report([t("a", "passed"), t("c1", "failed"), t("c2", "failed")]),
      canary,
      floor,
      exitCode: 0,
    });
    expect(v).toMatchObject({ passed: false, error: "tampered" });
  });

  test("a real failure fails the gate as an ordinary failure", () => {
    const v = judgeTestRun({
      report: report([t("a", "failed"), t("c1", "failed"), t("c2", "failed")]),
      canary,
      floor,
      exitCode: 1,
    });
    expect(v).toMatchObject({ passed: false, error: null, counts: { failed: 1 } });
  });

  test("fewer passed tests than the floor is too_few_tests, naming the floor", () => {
    const v = judgeTestRun({
      report: report([t("a", "passed"), t("b", "skipped"), t("c1", "failed"), t("c2", "failed")]),
      canary,
      floor: { min: 2, source: "task_check" },
      exitCode: 1,
    });
    expect(v).toMatchObject({ passed: false, error: "too_few_tests" });
    expect(v.summary).toContain("2");
    expect(v.summary).toContain("task check");
  });

  test("a test file that went silent is too_few_tests", () => {
    const v = judgeTestRun({
      report: report([t("a", "passed"), t("c1", "failed"), t("c2", "failed")], ["b.test.js"]),
      canary,
      floor,
      exitCode: 1,
    });
    expect(v).toMatchObject({ passed: false, error: "too_few_tests" });
    expect(v.summary).toContain("b.test.js");
  });

  test("each_file: every file that reported tests must report every canary test failed", () => {
    const perFile: PlantedCanary = { tests: ["c"], scope: "each_file" };
    const ok = report([
      t("a", "passed", "x"),
      t("c", "failed", "x"),
      t("b", "passed", "y"),
      t("c", "failed", "y"),
    ]);
    expect(judgeTestRun({ report: ok, canary: perFile, floor, exitCode: 1 }).passed).toBe(true);
    const spared = report([t("a", "passed", "x"), t("c", "failed", "x"), t("b", "passed", "y")]);
    const v = judgeTestRun({ report: spared, canary: perFile, floor, exitCode: 1 });
    expect(v).toMatchObject({ passed: false, error: "tampered" });
    expect(v.summary).toContain("in y");
  });

  // The invariant: nothing passes unless every canary test is reported failed, no real test failed, and
  // at least the floor of real tests passed — whatever the report says otherwise.
  test("property: a pass implies failed canaries, no real failure and the floor reached", () => {
    const outcome = fc.constantFrom<ReportedTest["outcome"]>("passed", "failed", "skipped");
    const arb = fc.record({
      real: fc.array(fc.record({ name: fc.constantFrom("a", "b", "c", "d"), outcome }), { maxLength: 6 }),
      canaries: fc.array(fc.record({ name: fc.constantFrom("c1", "c2"), outcome }), { maxLength: 3 }),
      silent: fc.boolean(),
      exitCode: fc.integer({ min: 0, max: 2 }),
      min: fc.integer({ min: 1, max: 4 }),
    });
    fc.assert(
      fc.property(arb, ({ real, canaries, silent, exitCode, min }) => {
        const tests = [...real, ...canaries].map((x) => t(x.name, x.outcome));
        const v = judgeTestRun({
          report: report(tests, silent ? ["s.test.js"] : []),
          canary,
          floor: { min, source: "declared" },
          exitCode,
        });
        if (!v.passed) return true;
        const failedCanary = (n: string) =>
          canaries.some((c) => c.name === n) && canaries.every((c) => c.name !== n || c.outcome === "failed");
        return (
          failedCanary("c1") &&
          failedCanary("c2") &&
          real.every((r) => r.outcome !== "failed") &&
          real.filter((r) => r.outcome === "passed").length >= min &&
          !silent &&
          exitCode !== 0
        );
      }),
    );
  });
});
