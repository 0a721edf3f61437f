import { describe, expect, it } from "vitest";
import { appraiseStep, type StepSpan, stepHealth } from "../../../src/core/agent/step-appraisal.js";
import type { LoopgateEvent } from "../../../src/core/events/loopgate-event.js";

const span = (over: Partial<StepSpan>): StepSpan => ({
  calls: [],
  siblingInFlight: false,
  batchDenial: false,
  check: null,
  ...over,
});

describe("appraiseStep: a pure function of a step's tool-call span", () => {
  it("given calls that end in a success, when appraised, then the step landed", () => {
    expect(appraiseStep(span({ calls: ["failed", "succeeded"] }))).toEqual({
      finding: "landed",
      measured: true,
    });
  });
  it("given no tool calls, when appraised, then it is a null step", () => {
    expect(appraiseStep(span({ calls: [] }))).toEqual({ finding: "null_step", measured: true });
  });
  it("given a last call that failed, when appraised, then the step ended on failure", () => {
    expect(appraiseStep(span({ calls: ["succeeded", "failed"] })).finding).toBe("ended_on_failure");
  });
  it("given a failure followed by a success, when appraised, then it is recovery: landed", () => {
    expect(appraiseStep(span({ calls: ["failed", "failed", "succeeded"] })).finding).toBe("landed");
  });
  it("given a last call that was refused, when appraised, then the step ended on refusal", () => {
    expect(appraiseStep(span({ calls: ["succeeded", "refused"] })).finding).toBe("ended_on_refusal");
  });
  it("given a declared check that failed, when appraised, then check_failed is read first", () => {
    expect(appraiseStep(span({ calls: ["succeeded"], check: { status: "failed" } }))).toEqual({
      finding: "check_failed",
      measured: true,
    });
    expect(appraiseStep(span({ calls: [], check: { status: "failed" } })).finding).toBe("check_failed");
  });
  it("given a check that passed, when the span is clean, then the span decides", () => {
    expect(appraiseStep(span({ calls: ["succeeded"], check: { status: "passed" } })).finding).toBe("landed");
  });
  it.each(["refused", "unavailable", "skipped"] as const)(
    "given a %s check, when appraised, then it is neither passed nor failed: the span decides",
    (status) => {
      expect(appraiseStep(span({ calls: [], check: { status } })).finding).toBe("null_step");
    },
  );
  it("given a sibling call still in flight, when appraised, then there is no finding", () => {
    expect(appraiseStep(span({ calls: [], siblingInFlight: true }))).toEqual({
      finding: null,
      measured: false,
    });
    expect(appraiseStep(span({ calls: ["failed"], siblingInFlight: true })).finding).toBeNull();
  });
  it("given a denial in the same batch, when appraised, then there is no finding", () => {
    expect(appraiseStep(span({ calls: ["refused"], batchDenial: true }))).toEqual({
      finding: null,
      measured: false,
    });
  });
  it("given ambiguity and a failed check, when appraised, then the check still reads, unmeasured", () => {
    expect(appraiseStep(span({ siblingInFlight: true, check: { status: "failed" } }))).toEqual({
      finding: "check_failed",
      measured: false,
    });
  });
  it("given a step that never went in progress, when appraised, then there is no span and no finding", () => {
    expect(appraiseStep(span({ calls: null }))).toEqual({ finding: null, measured: false });
  });
});

const ev = (type: string, data: object) =>
  ({
    id: "x",
    type,
    data,
    meta: { at: "2026-01-01T00:00:00Z", origin: "runtime" },
  }) as unknown as LoopgateEvent;
const write = (completed: string[], reopened: string[] = []) =>
  ev("todo_written", { attempt: 1, call_id: "c", items: [], changes: [], completed, reopened });
const appraised = (finding: string | null, measured: boolean, calls = 0) =>
  ev("step_appraised", {
    attempt: 1,
    call_id: "c",
    step: "s",
    finding,
    measured,
    calls,
    check: null,
    rendered: "",
  });

describe("stepHealth: per-run shares with their denominators", () => {
  it("given no run with the sensor, then both rates have no denominator and are null, not 0", () => {
    const h = stepHealth([[], [ev("run_finished", { status: "SUCCESS", reason: "" })]]);
    expect(h).toMatchObject({
      runs: 2,
      step_completions: 0,
      step_null_rate: null,
      step_null_rate_denominator: 0,
      step_reopen_rate: null,
      step_reopen_rate_denominator: 0,
    });
  });
  it("counts a measured completion with no calls as a null step whatever its check said", () => {
    const h = stepHealth([[write(["a"]), appraised("check_failed", true, 0)]]);
    expect(h).toMatchObject({
      step_measured: 1,
      step_nulls: 1,
      step_null_rate: 1,
      step_null_rate_denominator: 1,
    });
  });
  it("counts per run, not per event", () => {
    const h = stepHealth([
      [write(["a", "b"]), appraised("null_step", true), appraised("null_step", true)],
      [write(["a"]), appraised("landed", true, 2), write([], ["a"])],
      [write(["a"]), appraised(null, false)],
    ]);
    expect(h).toEqual({
      runs: 3,
      step_completions: 4,
      step_measured: 3,
      step_nulls: 2,
      step_reopens: 1,
      step_null_rate: 1 / 2,
      step_null_rate_denominator: 2,
      step_reopen_rate: 1 / 3,
      step_reopen_rate_denominator: 3,
    });
  });
});
