import { describe, expect, it } from "vitest";
import type { EventData } from "../../../src/core/events/loopgate-event.js";
import {
  decide,
  type EventBody,
  evolve,
  initialState,
  type RunCommand,
  type RunState,
} from "../../../src/core/run/run-decider.js";
import { type Decider, given } from "../../support/decider.js";
import {
  attempt,
  built,
  closed,
  fixIssued,
  gate,
  observed,
  pristine,
  started,
  touched,
} from "../../support/run-events.js";

const run: Decider<RunState, RunCommand, EventBody> = { initialState, evolve, decide };

const limitFinding = (
  n: number,
  severity: "blocking" | "warning" = "blocking",
): EventData<"finding_recorded"> => ({
  attempt: n,
  code: "limit_exceeded",
  severity,
  detail: "stopped by limits.file_size",
});
const builderData = (n: number): EventData<"builder_finished"> => ({
  attempt: n,
  exit_code: 153,
  signal: null,
  timed_out: false,
  duration_ms: 5,
  output_excerpt: "",
});

describe("run state: the attempt's facts, folded from the log", () => {
  it("records the pristine observation, the attempt's fix, builder, observation, closing and the fix issued after it", () => {
    const s = given(run, [
      started(["a"]),
      pristine("p-1"),
      attempt(1, null),
      built(1),
      observed(1, "o-1"),
      gate(1, "a", false),
      closed(1, false),
      fixIssued(1, "make gate a pass"),
      attempt(2, "make gate a pass"),
    ]).state();
    expect(s.pristineObservationId).toBe("p-1");
    expect(s.lastObservationId).toBe("o-1");
    expect(s.builderKind).toBe("command");
    expect(s.attempts).toEqual([
      {
        number: 1,
        requiredFix: null,
        builderFinished: true,
        afterObservationId: "o-1",
        closed: true,
        fixIssued: "make gate a pass",
      },
      {
        number: 2,
        requiredFix: "make gate a pass",
        builderFinished: false,
        afterObservationId: null,
        closed: false,
        fixIssued: null,
      },
    ]);
    expect(s.gateRuns.get(1)?.get("a")).toEqual([{ passed: false, error: null, exitCode: 1 }]);
  });

  it("an agent's tool call that changed the workspace is the last observation, not the pristine one", () => {
    const s = given(run, [started(["a"]), pristine("p-1"), attempt(1), touched(1, "call-1", "t-1")]).state();
    expect(s.lastObservationId).toBe("t-1");
    expect(s.pristineObservationId).toBe("p-1");
    expect(s.attempts[0]?.afterObservationId).toBeNull();
  });
});

describe("run decider: facts recorded in one append", () => {
  const open = [started(["a"]), pristine(), attempt(1)];

  it("record_builder carries the builder's limit finding with its result", () => {
    given(run, open)
      .when({ type: "record_builder", data: builderData(1), findings: [limitFinding(1)] })
      .thenEvents([
        { type: "builder_finished", data: builderData(1) },
        { type: "finding_recorded", data: limitFinding(1) },
      ]);
  });

  it("record_builder refuses a finding of another attempt", () => {
    given(run, open)
      .when({ type: "record_builder", data: builderData(1), findings: [limitFinding(2)] })
      .thenError(/a finding of attempt 2 in attempt 1/);
  });

  it("finish_attempt with a blocking finding records it first and closes the attempt as failed", () => {
    given(run, [...open, built(1), observed(1), gate(1, "a", true)])
      .when({ type: "finish_attempt", findings: [limitFinding(1)] })
      .thenEvents([
        { type: "finding_recorded", data: limitFinding(1) },
        { type: "attempt_finished", data: { attempt: 1, passed: false } },
      ]);
  });

  it("finish_attempt with only a warning closes a passing attempt as passed", () => {
    given(run, [...open, built(1), observed(1), gate(1, "a", true)])
      .when({ type: "finish_attempt", findings: [limitFinding(1, "warning")] })
      .thenEvents([
        { type: "finding_recorded", data: limitFinding(1, "warning") },
        { type: "attempt_finished", data: { attempt: 1, passed: true } },
      ]);
  });

  it("finish_attempt refuses a finding of another attempt, and a closed attempt", () => {
    given(run, open)
      .when({ type: "finish_attempt", findings: [limitFinding(3)] })
      .thenError(/a finding of attempt 3 in attempt 1/);
    given(run, [...open, closed(1, false)])
      .when({ type: "finish_attempt" })
      .thenError(/no attempt is open/);
  });

  it("record_gate with a failed environment records the result and the TOOL_FAILURE together", () => {
    const g = gate(1, "a", false);
    given(run, [...open, built(1), observed(1)])
      .when({
        type: "record_gate",
        data: g.data as EventData<"gate_run_finished">,
        infrastructure: "the gate sandbox failed",
      })
      .thenEvents([
        g,
        { type: "infrastructure_failed", data: { attempt: 1, reason: "the gate sandbox failed" } },
      ]);
  });

  it("record_builder and record_observation carry a TOOL_FAILURE in their own append", () => {
    given(run, open)
      .when({ type: "record_builder", data: builderData(1), infrastructure: "the builder could not start" })
      .thenEvents([
        { type: "builder_finished", data: builderData(1) },
        { type: "infrastructure_failed", data: { attempt: 1, reason: "the builder could not start" } },
      ]);
    const obs = observed(1, "o-1");
    given(run, [...open, built(1)])
      .when({
        type: "record_observation",
        data: obs.data as EventData<"workspace_observed">,
        infrastructure: "./build.sh never started",
      })
      .thenEvents([
        obs,
        { type: "infrastructure_failed", data: { attempt: 1, reason: "./build.sh never started" } },
      ]);
  });
});
