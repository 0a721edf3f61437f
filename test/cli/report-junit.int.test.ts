// The JUnit report as CI systems read it: valid against the Ant/Jenkins JUnit schema (xmllint) and
// read by a real JUnit consumer (test-results-parser) with the counts, names and failures it should have.
import { describe, expect, it } from "vitest";
import { renderJunit } from "../../src/cli/report/junit.js";
import { envelope, gate } from "./envelopes.js";
import { junitSchemaErrors, readAsCi } from "./junit-consumers.js";

const NASTY = 'ok\u0000\u0001\u001b[31m ]]> <failure> & "q" \uD800\uFFFF\nnext line';

describe("JUnit report read by CI tools", () => {
  it("the schema validator rejects what it should (a test case without a name)", async () => {
    const bad =
      '<testsuites><testsuite name="s" tests="1" failures="0" errors="0"><testcase classname="c" time="1"/></testsuite></testsuites>';
    expect(await junitSchemaErrors(bad)).toMatch(/name/);
  });

  it("an ESCALATED run with a hostile gate log is valid and read with its counts, names and failures", async () => {
    const env = envelope({
      status: "ESCALATED",
      reason: 'attempt cap reached; gate "unit" failed <exit 1>',
      attempts: 2,
      gates: [
        gate("unit", { passed: false, exit_code: 1, log_excerpt: "first" }),
        gate("unit", { attempt: 2, passed: false, exit_code: 1, log_excerpt: NASTY }),
        gate("no-debug", { attempt: 2 }),
      ],
    });
    const xml = renderJunit(env);
    expect(await junitSchemaErrors(xml)).toBeNull();
    const ci = readAsCi(xml);
    expect(ci.total).toBe(3);
    expect(ci.failed).toBe(2);
    expect(ci.passed).toBe(1);
    const suite = ci.suites[0];
    expect(suite?.cases.map((c) => [c.name, c.status])).toEqual([
      ["unit", "FAIL"],
      ["no-debug", "PASS"],
      ["verdict", "FAIL"],
    ]);
    expect(suite?.cases[0]?.failure).toBe("gate unit did not pass (exit 1)");
    // The log survives escaping: what the consumer reads is the log minus what XML cannot carry.
    expect(suite?.cases[0]?.stack_trace).toContain(']]> <failure> & "q"');
    expect(suite?.cases[0]?.stack_trace).toContain("next line");
    expect(suite?.metadata).toMatchObject({ run_id: env.run_id, status: "ESCALATED", reason: env.reason });
  });

  it("a TOOL_FAILURE and a timed-out gate are errors; a SUCCESS is all green", async () => {
    const failed = renderJunit(
      envelope({
        status: "TOOL_FAILURE",
        reason: "gate slow: timeout",
        gates: [
          gate("slow", {
            passed: false,
            exit_code: null,
            timed_out: true,
            error: "timeout",
            duration_ms: 60_000,
          }),
        ],
      }),
    );
    expect(await junitSchemaErrors(failed)).toBeNull();
    const f = readAsCi(failed);
    expect([f.total, f.failed, f.errors]).toEqual([2, 0, 2]);
    expect(f.status).toBe("FAIL");

    const ok = renderJunit(envelope({ gates: [gate("unit"), gate("lint")] }));
    expect(await junitSchemaErrors(ok)).toBeNull();
    const s = readAsCi(ok);
    expect([s.total, s.passed, s.failed, s.errors, s.status]).toEqual([3, 3, 0, 0, "PASS"]);
  });
});
