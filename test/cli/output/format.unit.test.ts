import { describe, expect, it } from "vitest";
import { formatEnvelope, formatEvent } from "../../../src/cli/output/format.js";
import type { RecordedEvent } from "../../../src/core/events/loopgate-event.js";
import type { Envelope } from "../../../src/core/run/envelope.js";

const meta = { at: "2026-11-29T22:00:00.000Z", origin: "runtime" as const };
const rec = (type: string, data: unknown) =>
  ({ id: "x", type, data, meta, stream: "run-x", revision: 7, position: 7 }) as RecordedEvent;

describe("readable audit lines", () => {
  it("shows the repair decision with its blockers, and the self-check claim with its findings", () => {
    const decided = formatEvent(
      rec("repair_decided", {
        attempt: 1,
        turn: 2,
        decision: "repair",
        semantic_status: "incomplete",
        blockers: [
          { code: "stale", detail: "d" },
          { code: "stale", detail: "e" },
        ],
        repairs_used: 0,
        cap: 1,
        warnings: [],
      }),
    );
    expect(decided).toContain("repair_decided");
    expect(decided).toContain("turn 2: repair (incomplete; repairs 0 of 1) blockers: stale");
    expect(decided).not.toContain("{");
  });

  it("the human envelope shows the judge, the advisory self-check and warnings", () => {
    const env: Envelope = {
      run_id: "r",
      task_id: "t",
      status: "SUCCESS",
      reason: "all 1 gates passed on attempt 1",
      attempts: 1,
      gates: [
        {
          id: "g",
          attempt: 1,
          passed: true,
          exit_code: 0,
          timed_out: false,
          error: null,
          duration_ms: 1,
          log_excerpt: "",
        },
      ],
      judge: { verdict: "approve", rules_applied: ["api"] },
      self_check: {
        advisory: true,
        semantic_status: "incomplete",
        decision: "cap_reached",
        blockers: ["stale"],
        repairs_used: 1,
        cap: 1,
      },
      findings: [
        {
          attempt: 1,
          code: "change_outside_deliverables",
          severity: "warning",
          path: "notes.txt",
          detail: "d",
        },
      ],
      claims: [],
      sandbox: "bubblewrap",
      audit: {
        self_correction_count: 0,
        latency_ms: 1,
        hedge_warning: false,
        cost: null,
        tokens: null,
        event_count: 9,
      },
    };
    const text = formatEnvelope(env);
    expect(text).toContain("judge: approve (rules: api)");
    expect(text).toContain(
      "self-check (advisory): incomplete, repair gate cap_reached, repairs 1 of 1; blockers: stale",
    );
    expect(text).toContain("findings: change_outside_deliverables notes.txt");
  });

  it("shows a short excerpt of a failed gate's log, escaped; a passed gate shows none", () => {
    const gate = (id: string, passed: boolean, log: string) => ({
      id,
      attempt: 1,
      passed,
      exit_code: passed ? 0 : 1,
      timed_out: false,
      error: null,
      duration_ms: 1,
      log_excerpt: log,
    });
    const env = {
      run_id: "r",
      task_id: "t",
      status: "ESCALATED",
      reason: "attempt cap reached (1 of 1); attempt 1: gate unit failed (exit 1)",
      attempts: 1,
      gates: [
        gate("unit", false, "ok 1 - a\nnot ok 2 - keeps accents \u001b[2J\n  expected: 'creme'\n# pass 1\n"),
        gate("lint", true, "not ok but passed anyway"),
      ],
      findings: [],
      claims: [],
      sandbox: "bubblewrap",
      audit: {
        self_correction_count: 0,
        latency_ms: 1,
        hedge_warning: false,
        cost: null,
        tokens: null,
        event_count: 9,
      },
    } as Envelope;
    const lines = formatEnvelope(env, { me: "npx loopgate", storeArg: " --store /s" }).split("\n");
    const at = lines.indexOf("  ✗ unit");
    expect(lines.slice(at, at + 4)).toEqual([
      "  ✗ unit",
      "      | not ok 2 - keeps accents \\x1b[2J",
      "      |   expected: 'creme'",
      "      | … 4 lines in all; the whole log: npx loopgate status r --json --store /s",
    ]);
    expect(lines[at + 4]).toBe("  ✓ lint");
    expect(formatEnvelope(env)).not.toContain("not ok but passed");
  });
});
