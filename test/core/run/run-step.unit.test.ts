import { describe, it } from "vitest";
import { givenRun } from "../../support/next-step.js";
import {
  attempt,
  blockingFinding,
  built,
  capped,
  closed,
  fixIssued,
  gate,
  infrastructure,
  judged,
  observed,
  pristine,
  reopened,
  runFinished,
  started,
  touched,
} from "../../support/run-events.js";

const ab = { gates: ["a", "b"] };
const prepared = [started(["a", "b"]), pristine()];
const judgedRun = [started(["a", "b"], { judge: true }), pristine()];

describe("nextRunStep: before and after the attempts", () => {
  it("refuses a log that never started", () => {
    givenRun([])
      .whenNextStep(ab)
      .thenError(/has not started/);
  });

  it("prepares a run that has no pristine observation yet", () => {
    givenRun([started(["a", "b"])])
      .whenNextStep(ab)
      .thenStep({ kind: "prepare" });
  });

  it("starts attempt 1 without a fix once prepared", () => {
    givenRun(prepared)
      .whenNextStep(ab)
      .thenStep({ kind: "start_attempt", attempt: 1, fix: { source: "none" } });
  });

  it("finishes a run whose verdict is recorded", () => {
    givenRun([...prepared, attempt(1), runFinished("ESCALATED", "x")])
      .whenNextStep(ab)
      .thenStep({ kind: "finish_run" });
  });

  it("finishes a run with an infrastructure failure, even with its attempt open", () => {
    givenRun([...prepared, attempt(1), built(1), infrastructure(1, "disk full")])
      .whenNextStep(ab)
      .thenStep({ kind: "finish_run" });
  });

  it("a budget cap closes the open attempt first, then finishes the run", () => {
    const log = [...prepared, attempt(1), capped(1)];
    givenRun(log).whenNextStep(ab).thenStep({ kind: "finish_attempt", attempt: 1 });
    givenRun([...log, closed(1, false)])
      .whenNextStep(ab)
      .thenStep({ kind: "finish_run" });
  });

  it("finishes after an attempt that passed", () => {
    givenRun([
      ...prepared,
      attempt(1),
      built(1),
      observed(1),
      gate(1, "a", true),
      gate(1, "b", true),
      closed(1, true),
    ])
      .whenNextStep(ab)
      .thenStep({ kind: "finish_run" });
  });

  it("finishes at the attempt cap", () => {
    givenRun([
      started(["a"], { max: 1 }),
      pristine(),
      attempt(1),
      built(1),
      observed(1),
      gate(1, "a", false),
      closed(1, false),
    ])
      .whenNextStep({ gates: ["a"] })
      .thenStep({ kind: "finish_run" });
  });
});

describe("nextRunStep: the next attempt's required fix", () => {
  const failed = [
    ...prepared,
    attempt(1),
    built(1),
    observed(1),
    gate(1, "a", false),
    gate(1, "b", true),
    closed(1, false),
  ];

  it("is written from the gates when attempt 1 failed a gate", () => {
    givenRun(failed)
      .whenNextStep(ab)
      .thenStep({ kind: "start_attempt", attempt: 2, fix: { source: "gates", attempt: 1 } });
  });

  it("is written from the gates when a blocking finding failed an all-green attempt", () => {
    givenRun([
      ...prepared,
      attempt(1),
      built(1),
      observed(1),
      blockingFinding(1),
      gate(1, "a", true),
      gate(1, "b", true),
      closed(1, false),
    ])
      .whenNextStep(ab)
      .thenStep({ kind: "start_attempt", attempt: 2, fix: { source: "gates", attempt: 1 } });
  });

  it("is the one already issued when the log holds it (a crash between the fix and the attempt)", () => {
    givenRun([...failed, fixIssued(1, "gate a failed")])
      .whenNextStep(ab)
      .thenStep({ kind: "start_attempt", attempt: 2, fix: { source: "issued", text: "gate a failed" } });
  });

  it("is written from the judge when it rejected an attempt whose gates all passed", () => {
    givenRun([
      ...judgedRun,
      attempt(1),
      built(1),
      observed(1),
      gate(1, "a", true),
      gate(1, "b", true),
      judged(1, "reject"),
      closed(1, false),
    ])
      .whenNextStep(ab)
      .thenStep({ kind: "start_attempt", attempt: 2, fix: { source: "judge", attempt: 1 } });
  });
});

describe("nextRunStep: inside the open attempt", () => {
  it("runs the builder with the attempt's required fix", () => {
    givenRun([
      ...prepared,
      attempt(1),
      built(1),
      observed(1),
      gate(1, "a", false),
      gate(1, "b", false),
      closed(1, false),
      fixIssued(1, "fix a"),
      attempt(2, "fix a"),
    ])
      .whenNextStep(ab)
      .thenStep({ kind: "run_builder", attempt: 2, requiredFix: "fix a" });
  });

  it("runs the builder of attempt 1 with no fix, even after agent steps were recorded", () => {
    givenRun([...prepared, attempt(1), touched(1, "c1", "obs-x")])
      .whenNextStep(ab)
      .thenStep({ kind: "run_builder", attempt: 1, requiredFix: null });
  });

  it("observes once the builder finished", () => {
    givenRun([...prepared, attempt(1), built(1)])
      .whenNextStep(ab)
      .thenStep({ kind: "observe", attempt: 1 });
  });

  it("loopgate verify (the work came from a folder) observes without running a builder", () => {
    givenRun([started(["a"], { builder: "workspace", max: 1 }), pristine(), attempt(1)])
      .whenNextStep({ gates: ["a"] })
      .thenStep({ kind: "observe", attempt: 1 });
  });

  it("runs the first gate on the after-builder observation", () => {
    givenRun([...prepared, attempt(1), built(1), observed(1, "obs-7")])
      .whenNextStep(ab)
      .thenStep({ kind: "run_gate", attempt: 1, gateId: "a", index: 0, afterObservationId: "obs-7" });
  });

  it("runs the next gate in task order, whatever the first one's outcome", () => {
    givenRun([...prepared, attempt(1), built(1), observed(1, "obs-7"), gate(1, "a", false)])
      .whenNextStep(ab)
      .thenStep({ kind: "run_gate", attempt: 1, gateId: "b", index: 1, afterObservationId: "obs-7" });
  });

  it("does not count a gate run of an earlier attempt", () => {
    givenRun([
      ...prepared,
      attempt(1),
      built(1),
      observed(1),
      gate(1, "a", true),
      gate(1, "b", false),
      closed(1, false),
      fixIssued(1, "b"),
      attempt(2, "b"),
      built(2),
      observed(2, "obs-2"),
    ])
      .whenNextStep(ab)
      .thenStep({ kind: "run_gate", attempt: 2, gateId: "a", index: 0, afterObservationId: "obs-2" });
  });

  it("consults the judge once every gate passed", () => {
    givenRun([
      ...judgedRun,
      attempt(1),
      built(1),
      observed(1, "obs-7"),
      gate(1, "a", true),
      gate(1, "b", true),
    ])
      .whenNextStep(ab)
      .thenStep({ kind: "consult_judge", attempt: 1, afterObservationId: "obs-7" });
  });

  it("does not consult the judge when a gate failed: it finishes the attempt", () => {
    givenRun([...judgedRun, attempt(1), built(1), observed(1), gate(1, "a", true), gate(1, "b", false)])
      .whenNextStep(ab)
      .thenStep({ kind: "finish_attempt", attempt: 1 });
  });

  it("does not consult the judge when a blocking finding failed the attempt", () => {
    givenRun([
      ...judgedRun,
      attempt(1),
      built(1),
      observed(1),
      blockingFinding(1),
      gate(1, "a", true),
      gate(1, "b", true),
    ])
      .whenNextStep(ab)
      .thenStep({ kind: "finish_attempt", attempt: 1 });
  });

  it("finishes the attempt once the judge decided", () => {
    givenRun([
      ...judgedRun,
      attempt(1),
      built(1),
      observed(1),
      gate(1, "a", true),
      gate(1, "b", true),
      judged(1, "approve"),
    ])
      .whenNextStep(ab)
      .thenStep({ kind: "finish_attempt", attempt: 1 });
  });

  it("finishes the attempt once every gate ran, without a judge", () => {
    givenRun([...prepared, attempt(1), built(1), observed(1), gate(1, "a", true), gate(1, "b", true)])
      .whenNextStep(ab)
      .thenStep({ kind: "finish_attempt", attempt: 1 });
  });

  it("a reopened interrupted run carries on where the interrupt stopped it", () => {
    givenRun([
      ...prepared,
      attempt(1),
      built(1),
      observed(1, "obs-7"),
      infrastructure(1, "interrupted (SIGINT); the run did not finish", true),
      runFinished("TOOL_FAILURE", "interrupted (SIGINT); the run did not finish"),
      reopened(),
    ])
      .whenNextStep(ab)
      .thenStep({ kind: "run_gate", attempt: 1, gateId: "a", index: 0, afterObservationId: "obs-7" });
  });
});

describe("resumeStart: what a resume does first", () => {
  const interrupted = [
    ...prepared,
    attempt(1),
    infrastructure(1, "interrupted (SIGINT); the run did not finish", true),
    runFinished("TOOL_FAILURE", "interrupted (SIGINT); the run did not finish"),
  ];
  it("reopens a run the user interrupted", () =>
    givenRun(interrupted).whenNextStep(ab).thenResumeStarts("reopen"));
  it("does nothing but report a finished run", () =>
    givenRun([...prepared, runFinished("ESCALATED", "no attempt ran")])
      .whenNextStep(ab)
      .thenResumeStarts("finished"));
  it("prepares again a run that crashed while preparing", () =>
    givenRun([started(["a", "b"])])
      .whenNextStep(ab)
      .thenResumeStarts("prepare"));
  it("rolls the workspace back when the builder was running", () =>
    givenRun([...prepared, attempt(1)])
      .whenNextStep(ab)
      .thenResumeStarts("roll_back_builder"));
  it("continues from the log otherwise (here: between two gates)", () =>
    givenRun([...prepared, attempt(1), built(1), observed(1), gate(1, "a", true)])
      .whenNextStep(ab)
      .thenResumeStarts("continue"));
  it("after reopening, the interrupted builder is rolled back like a crashed one", () =>
    givenRun([...interrupted, reopened()])
      .whenNextStep(ab)
      .thenResumeStarts("roll_back_builder"));
});
