import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { type EmittedTest, resolveReported } from "../../../src/gates/tamper/identity.js";
import { judgeByIdentity, type PlantedTwins } from "../../../src/gates/tamper/identity-verdict.js";
import type { ReportedTest, TestReport } from "../../../src/gates/tamper/test-report.js";

const FILE = "heldout/test_x.py";
const leaf = (name: string, outcome: ReportedTest["outcome"], suites: string[] = ["T"]): ReportedTest => ({
  name,
  suites,
  file: FILE,
  outcome,
});
const report = (tests: ReportedTest[]): TestReport => ({ channel: "summary", tests, silentFiles: [] });
const key = (...path: string[]) => [FILE, ...path].join("::");

/** Test `a` renamed `a_p_1`, its twin `a_q_2`; test `b` renamed `b_r_3`, its twin `b_s_4`. */
function twins(): PlantedTwins {
  const emitted = new Map<string, EmittedTest>([
    [key("T", "a_p_1"), { original: key("T", "a"), twin: null }],
    [key("T", "a_q_2"), { original: key("T", "a"), twin: { site: "0.0", replacement: "5" } }],
    [key("T", "b_r_3"), { original: key("T", "b"), twin: null }],
    [key("T", "b_s_4"), { original: key("T", "b"), twin: { site: "0.0", replacement: "'yx'" } }],
  ]);
  return { emitted, twins: [key("T", "a_q_2"), key("T", "b_s_4")] };
}
const enforce = { mode: "enforce" as const, required: [key("T", "a"), key("T", "b")] };
const honest = [
  leaf("a_p_1", "passed"),
  leaf("a_q_2", "failed"),
  leaf("b_r_3", "passed"),
  leaf("b_s_4", "failed"),
];

describe("judgeByIdentity, enforcing a lock", () => {
  test("passes when every recorded test passed under its new name and every twin failed, exit non-zero", () => {
    const v = judgeByIdentity({
      report: report(honest),
      canary: null,
      twins: twins(),
      rule: enforce,
      exitCode: 1,
    });
    expect(v).toMatchObject({ passed: true, error: null, identity: { required: 2, passed: 2 } });
    expect(v.twins).toEqual({ planted: 2, failed: 2 });
  });

  test("always-pass assertions (every test passes, twins too) are tampering", () => {
    const all = honest.map((t) => ({ ...t, outcome: "passed" as const }));
    const v = judgeByIdentity({
      report: report(all),
      canary: null,
      twins: twins(),
      rule: enforce,
      exitCode: 0,
    });
    expect(v).toMatchObject({ passed: false, error: "tampered" });
  });

  test("skips are not passes: a skipped recorded test fails the gate, a skipped twin is not a failed one", () => {
    const skipped = honest.map((t) => ({ ...t, outcome: "skipped" as const }));
    const v = judgeByIdentity({
      report: report(skipped),
      canary: null,
      twins: twins(),
      rule: enforce,
      exitCode: 0,
    });
    expect(v.passed).toBe(false);
    expect(v.summary).toContain("skipped");
  });

  test("extra passing tests never make up for a missing recorded one", () => {
    const extra = [
      leaf("a_p_1", "passed"),
      leaf("a_q_2", "failed"),
      leaf("b_s_4", "failed"),
      ...Array.from({ length: 20 }, (_, i) => leaf(`fake_${i}`, "passed")),
    ];
    const v = judgeByIdentity({
      report: report(extra),
      canary: null,
      twins: twins(),
      rule: enforce,
      exitCode: 1,
    });
    expect(v).toMatchObject({ passed: false, error: null, identity: { required: 2, passed: 1 } });
    expect(v.identity.notPassed).toEqual([key("T", "b")]);
  });

  test("a twin that passed beside its passing original is tampering even when another test fails", () => {
    const tests = [
      leaf("a_p_1", "passed"),
      leaf("a_q_2", "passed"),
      leaf("b_r_3", "failed"),
      leaf("b_s_4", "failed"),
    ];
    const v = judgeByIdentity({
      report: report(tests),
      canary: null,
      twins: twins(),
      rule: enforce,
      exitCode: 1,
    });
    expect(v.error).toBe("tampered");
  });

  test("a twin passing where its original failed is a plain failure (wrong code can hit a twin's value)", () => {
    const tests = [
      leaf("a_p_1", "failed"),
      leaf("a_q_2", "passed"),
      leaf("b_r_3", "passed"),
      leaf("b_s_4", "failed"),
    ];
    const v = judgeByIdentity({
      report: report(tests),
      canary: null,
      twins: twins(),
      rule: enforce,
      exitCode: 1,
    });
    expect(v).toMatchObject({ passed: false, error: null });
  });

  test("a twin never reported while every original passed is tampering (it was filtered out or swallowed)", () => {
    const tests = [leaf("a_p_1", "passed"), leaf("a_q_2", "failed"), leaf("b_r_3", "passed")];
    const v = judgeByIdentity({
      report: report(tests),
      canary: null,
      twins: twins(),
      rule: enforce,
      exitCode: 1,
    });
    expect(v.error).toBe("tampered");
  });

  test("exit 0 although twins failed is tampering (the exit status does not report failures)", () => {
    const v = judgeByIdentity({
      report: report(honest),
      canary: null,
      twins: twins(),
      rule: enforce,
      exitCode: 0,
    });
    expect(v.error).toBe("tampered");
  });

  test("no readable report is unreadable, never a pass", () => {
    const v = judgeByIdentity({ report: null, canary: null, twins: twins(), rule: enforce, exitCode: 0 });
    expect(v).toMatchObject({ passed: false, error: "unreadable" });
  });

  test("a recorded test under another name (renamed by the builder) does not count", () => {
    const tests = [
      leaf("a", "passed", ["Other"]),
      leaf("b_r_3", "passed"),
      leaf("a_q_2", "failed"),
      leaf("b_s_4", "failed"),
    ];
    const v = judgeByIdentity({
      report: report(tests),
      canary: null,
      twins: twins(),
      rule: enforce,
      exitCode: 1,
    });
    expect(v.identity.notPassed).toEqual([key("T", "a")]);
  });

  test("property: with twins planted, no report in which every result has the same outcome passes", () => {
    fc.assert(
      fc.property(
        fc.constantFrom("passed", "failed", "skipped"),
        fc.integer({ min: 0, max: 2 }),
        (o, exit) => {
          const tests = honest.map((t) => ({ ...t, outcome: o as ReportedTest["outcome"] }));
          const v = judgeByIdentity({
            report: report(tests),
            canary: null,
            twins: twins(),
            rule: enforce,
            exitCode: exit,
          });
          expect(v.passed).toBe(false);
        },
      ),
    );
  });
});

describe("judgeByIdentity, recording", () => {
  test("records the originals' identities and the twins the oracle failed; a twin it passed is dropped", () => {
    const tests = [
      leaf("a_p_1", "passed"),
      leaf("a_q_2", "failed"),
      leaf("b_r_3", "passed"),
      leaf("b_s_4", "passed"),
    ];
    const v = judgeByIdentity({
      report: report(tests),
      canary: null,
      twins: twins(),
      rule: { mode: "record" },
      exitCode: 1,
    });
    expect(v.passed).toBe(true);
    expect(v.observed).toEqual({ passed: [key("T", "a"), key("T", "b")], twinsFailed: [key("T", "a_q_2")] });
  });

  test("an oracle that fails a real test records nothing", () => {
    const tests = [leaf("a_p_1", "failed"), leaf("b_r_3", "passed")];
    const v = judgeByIdentity({
      report: report(tests),
      canary: null,
      twins: twins(),
      rule: { mode: "record" },
      exitCode: 1,
    });
    expect(v.passed).toBe(false);
    expect(v.observed).toBeUndefined();
  });
});

describe("resolveReported", () => {
  const emitted = twins().emitted;
  test("maps a parametrised leaf of a renamed test to the original's identity with its parameters", () => {
    expect(resolveReported(leaf("a_p_1[1h-3600]", "passed"), emitted)).toEqual({
      key: key("T", "a[1h-3600]"),
      twin: null,
      outcome: "passed",
    });
  });
  test("maps a subtest of a twin to the twin", () => {
    const r = resolveReported({ ...leaf("inner", "failed"), suites: ["T", "b_s_4"] }, emitted);
    expect(r).toEqual({ key: key("T", "b", "inner"), twin: key("T", "b_s_4"), outcome: "failed" });
  });
  test("leaves a test it does not know as it is", () => {
    expect(resolveReported(leaf("c", "passed"), emitted).key).toBe(key("T", "c"));
  });
});
