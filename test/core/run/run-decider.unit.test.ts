import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { EventData } from "../../../src/core/events/loopgate-event.js";
import { DomainError } from "../../../src/core/kernel/errors.js";
import {
  decide,
  type EventBody,
  foldRun,
  type RunCommand,
  verdict,
} from "../../../src/core/run/run-decider.js";

const started = (gates: string[], max = 3): EventBody => ({
  type: "run_started",
  data: {
    task_id: "t",
    task_path: "/t/task.yaml",
    task_digest: "d",
    builder: { kind: "noop" },
    max_attempts: max,
    gates: gates.map((id) => ({ id, kind: "subprocess" as const })),
    sandbox: "bubblewrap",
    run_dir: "/r",
  },
});
const attempt = (n: number): EventBody => ({
  type: "attempt_started",
  data: { attempt: n, required_fix: null },
});
const gate = (
  n: number,
  id: string,
  passed: boolean,
  error: EventData<"gate_run_finished">["error"] = null,
): EventBody => ({
  type: "gate_run_finished",
  data: {
    attempt: n,
    gate_id: id,
    passed,
    exit_code: passed ? 0 : 1,
    timed_out: error === "timeout",
    error,
    duration_ms: 1,
    log_excerpt: "",
    summary: "",
  },
});
const finished = (n: number, passed: boolean): EventBody => ({
  type: "attempt_finished",
  data: { attempt: n, passed },
});
const blocking = (n: number): EventBody => ({
  type: "finding_recorded",
  data: { attempt: n, code: "protected_path_modified", severity: "blocking", path: "test/a.js", detail: "x" },
});

/** given events, when command, then events. */
function spec(given: EventBody[], when: RunCommand) {
  return decide(when, foldRun(given));
}

describe("run decider: given / when / then", () => {
  it("finishes with SUCCESS when every gate passed on the final attempt", () => {
    const then = spec(
      [started(["a", "b"]), attempt(1), gate(1, "a", true), gate(1, "b", true), finished(1, true)],
      { type: "finish_run" },
    );
    expect(then).toEqual([
      { type: "run_finished", data: { status: "SUCCESS", reason: "all 2 gates passed on attempt 1" } },
    ]);
  });

  it("does not count a gate that passed on an earlier attempt", () => {
    const given = [
      started(["a", "b"], 2),
      attempt(1),
      gate(1, "a", true),
      gate(1, "b", false),
      finished(1, false),
      attempt(2),
      gate(2, "b", true),
      finished(2, false),
    ];
    const [e] = spec(given, { type: "finish_run" });
    expect(e?.type).toBe("run_finished");
    expect(e?.data).toMatchObject({ status: "ESCALATED" });
    expect(e?.data).toMatchObject({ reason: expect.stringContaining("gate a did not run") });
  });

  it("escalates at the attempt cap naming the failing gate and its error", () => {
    const [e] = spec([started(["a"], 1), attempt(1), gate(1, "a", false, "timeout"), finished(1, false)], {
      type: "finish_run",
    });
    expect(e?.data).toEqual({
      status: "ESCALATED",
      reason: "attempt cap reached (1 of 1); attempt 1: gate a failed (timeout)",
    });
  });

  it("names a builder timeout in the final reason, with how long it ran", () => {
    const timedOut = {
      type: "builder_finished",
      data: {
        attempt: 1,
        exit_code: null,
        signal: "SIGKILL",
        timed_out: true,
        duration_ms: 600_000,
        output_excerpt: "",
      },
    } as EventBody;
    const [e] = spec([started(["a"], 1), attempt(1), timedOut, gate(1, "a", false), finished(1, false)], {
      type: "finish_run",
    });
    expect(e?.data).toMatchObject({
      status: "ESCALATED",
      reason: expect.stringContaining("the builder timed out after 600 s (builder.timeout in the task)"),
    });
  });

  it("a blocking finding keeps an all-green attempt from passing", () => {
    const given = [started(["a"], 1), attempt(1), gate(1, "a", true), blocking(1)];
    expect(spec(given, { type: "finish_attempt" })).toEqual([finished(1, false)]);
    const [e] = spec([...given, finished(1, false)], { type: "finish_run" });
    expect(e?.data).toMatchObject({ status: "ESCALATED" });
  });

  it("infrastructure failure wins over everything: TOOL_FAILURE with its reason", () => {
    const given = [
      started(["a"]),
      attempt(1),
      gate(1, "a", true),
      { type: "infrastructure_failed", data: { attempt: 1, reason: "bwrap missing" } } as EventBody,
    ];
    expect(spec(given, { type: "finish_run" })).toEqual([
      { type: "run_finished", data: { status: "TOOL_FAILURE", reason: "bwrap missing" } },
    ]);
  });

  it("refuses a gate result for an attempt that is not open", () => {
    const given = [started(["a"]), attempt(1), gate(1, "a", false), finished(1, false)];
    expect(() =>
      spec(given, { type: "record_gate", data: gate(1, "a", true).data as EventData<"gate_run_finished"> }),
    ).toThrow(DomainError);
  });

  it("refuses an undeclared gate, a fourth attempt past a cap of three, and a second start", () => {
    expect(() =>
      spec([started(["a"]), attempt(1)], {
        type: "record_gate",
        data: gate(1, "zz", true).data as EventData<"gate_run_finished">,
      }),
    ).toThrow(/not declared/);
    const three = [
      started(["a"], 3),
      attempt(1),
      finished(1, false),
      attempt(2),
      finished(2, false),
      attempt(3),
      finished(3, false),
    ];
    expect(() => spec(three, { type: "start_attempt", requiredFix: null })).toThrow(/cap/);
    expect(() =>
      spec([started(["a"])], { type: "start_run", data: started(["a"]).data as EventData<"run_started"> }),
    ).toThrow(/already/);
  });

  it("refuses to finish a run twice", () => {
    const given = [
      started(["a"]),
      attempt(1),
      gate(1, "a", true),
      finished(1, true),
      { type: "run_finished", data: { status: "SUCCESS", reason: "x" } } as EventBody,
    ];
    expect(() => spec(given, { type: "finish_run" })).toThrow(/finished/);
  });
});

const infra = (n: number, reason: string, interrupted?: boolean): EventBody => ({
  type: "infrastructure_failed",
  data: { attempt: n, reason, ...(interrupted ? { interrupted } : {}) },
});
const runFinished = (given: EventBody[]): EventBody => ({
  type: "run_finished",
  data: verdict(foldRun(given)),
});
const reopen: RunCommand = {
  type: "resume",
  data: { from_revision: 9, in_doubt: [], action: "reopen", reopened: true },
};
const reopenData = { from_revision: 9, in_doubt: [], action: "reopen", reopened: true };
describe("run decider: an interrupted run can be reopened, nothing else", () => {
  it("given an interrupt recorded as TOOL_FAILURE, a reopening resume makes the run unfinished again", () => {
    const upTo = [started(["a"]), attempt(1), infra(1, "interrupted (SIGINT); the run did not finish", true)];
    const given = [...upTo, runFinished(upTo)];
    expect(verdict(foldRun(given)).status).toBe("TOOL_FAILURE");
    const then = spec(given, reopen);
    expect(then).toEqual([{ type: "run_resumed", data: reopenData }]);
    const after = foldRun([...given, ...then]);
    expect(after.finished).toBeNull();
    expect(after.infrastructure).toBeNull();
    // The open attempt goes on, and its gates decide the verdict.
    const more = [...given, ...then, gate(1, "a", true), finished(1, true)];
    expect(spec(more, { type: "finish_run" })).toEqual([
      { type: "run_finished", data: { status: "SUCCESS", reason: "all 1 gates passed on attempt 1" } },
    ]);
  });

  it("refuses to reopen a run that finished for any other reason", () => {
    const failed = [started(["a"]), attempt(1), infra(1, "bwrap is missing")];
    expect(() => spec([...failed, runFinished(failed)], reopen)).toThrow(/interrupted/);
    const success = [started(["a"]), attempt(1), gate(1, "a", true), finished(1, true)];
    expect(() => spec([...success, runFinished(success)], reopen)).toThrow(/interrupted/);
  });

  it("an interrupt after a real infrastructure failure does not make the run reopenable", () => {
    const given = [
      started(["a"]),
      attempt(1),
      infra(1, "bwrap is missing"),
      infra(1, "interrupted (SIGINT)", true),
    ];
    const all = [...given, runFinished(given)];
    expect(verdict(foldRun(all)).reason).toBe("bwrap is missing");
    expect(() => spec(all, reopen)).toThrow(/interrupted/);
  });
});

// Arbitrary event sequences, including nonsensical orders that a corrupted or hostile log could hold.
const gateIds = ["a", "b", "c"];
const arbEvent: fc.Arbitrary<EventBody> = fc.oneof(
  fc.integer({ min: 1, max: 4 }).map(attempt),
  fc
    .tuple(
      fc.integer({ min: 1, max: 4 }),
      fc.constantFrom(...gateIds, "x"),
      fc.boolean(),
      fc.constantFrom(null, "timeout" as const, "crashed" as const),
    )
    .map(([n, id, p, err]) => gate(n, id, p, err)),
  fc.tuple(fc.integer({ min: 1, max: 4 }), fc.boolean()).map(([n, p]) => finished(n, p)),
  fc.integer({ min: 1, max: 4 }).map(blocking),
  // Interrupts and reopening resumes, in any order a log could hold them.
  fc.integer({ min: 1, max: 4 }).map((n) => infra(n, "interrupted (SIGINT)", true)),
  fc.constant({ type: "run_resumed", data: reopenData } as EventBody),
);

describe("run decider: properties", () => {
  it("no event sequence yields SUCCESS unless every gate passed on the final attempt's own run", () => {
    fc.assert(
      fc.property(
        fc.subarray(gateIds, { minLength: 1 }),
        fc.integer({ min: 1, max: 4 }),
        fc.array(arbEvent, { maxLength: 30 }),
        (declared, max, rest) => {
          const events = [started(declared, max), ...rest];
          const { status } = verdict(foldRun(events));
          if (status !== "SUCCESS") return;
          // The independent rule, computed from the raw list: the final attempt is the number of attempt_started events.
          const final = events.filter((e) => e.type === "attempt_started").length;
          for (const id of declared) {
            const runs = events.filter(
              (e) => e.type === "gate_run_finished" && e.data.attempt === final && e.data.gate_id === id,
            );
            expect(runs.length).toBeGreaterThan(0);
            for (const r of runs) expect((r.data as { passed: boolean }).passed).toBe(true);
          }
          expect(events.some((e) => e.type === "finding_recorded" && e.data.attempt === final)).toBe(false);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it("folding is deterministic: the same events always give the same verdict", () => {
    fc.assert(
      fc.property(fc.array(arbEvent, { maxLength: 20 }), (rest) => {
        const events = [started(gateIds, 3), ...rest];
        expect(verdict(foldRun(events))).toEqual(verdict(foldRun([...events])));
      }),
    );
  });
});

describe("run decider: the judge can only veto", () => {
  const withJudge = (gates: string[], max = 3): EventBody => {
    const e = started(gates, max);
    return {
      ...e,
      data: { ...(e.data as EventData<"run_started">), judge: "scripted:judge.yaml" },
    } as EventBody;
  };
  const judged = (n: number, verdict: "approve" | "reject" | "inconclusive"): EventBody => ({
    type: "judge_finished",
    data: { attempt: n, verdict, rules_applied: ["r"], violations: [], reason: verdict, duration_ms: 1 },
  });

  it("all gates green but no approval is not SUCCESS; approval makes it SUCCESS", () => {
    const given = [withJudge(["a"], 1), attempt(1), gate(1, "a", true)];
    expect(verdict(foldRun([...given, finished(1, false)])).status).toBe("ESCALATED");
    expect(verdict(foldRun([...given, judged(1, "approve"), finished(1, true)])).status).toBe("SUCCESS");
    expect(verdict(foldRun([...given, judged(1, "inconclusive"), finished(1, false)])).reason).toContain(
      "judge inconclusive",
    );
  });

  it("refuses to consult the judge before every gate passed", () => {
    const given = [withJudge(["a"]), attempt(1), gate(1, "a", false)];
    expect(() =>
      spec(given, { type: "record_judge", data: judged(1, "approve").data as EventData<"judge_finished"> }),
    ).toThrow(/only after every gate passed/);
  });

  it("property: an approval never turns a failed gate into SUCCESS", () => {
    const judgeEvent = fc
      .tuple(
        fc.integer({ min: 1, max: 4 }),
        fc.constantFrom("approve" as const, "reject" as const, "inconclusive" as const),
      )
      .map(([n, v]) => judged(n, v));
    fc.assert(
      fc.property(fc.array(fc.oneof(arbEvent, judgeEvent), { maxLength: 30 }), (rest) => {
        const events = [withJudge(gateIds, 4), ...rest];
        if (verdict(foldRun(events)).status !== "SUCCESS") return;
        const final = events.filter((e) => e.type === "attempt_started").length;
        for (const id of gateIds) {
          const runs = events.filter(
            (e) => e.type === "gate_run_finished" && e.data.attempt === final && e.data.gate_id === id,
          );
          expect(runs.length).toBeGreaterThan(0);
          for (const r of runs) expect((r.data as { passed: boolean }).passed).toBe(true);
        }
        const verdicts = events.filter((e) => e.type === "judge_finished" && e.data.attempt === final);
        expect((verdicts.at(-1)?.data as { verdict: string } | undefined)?.verdict).toBe("approve");
      }),
      { numRuns: 2000 },
    );
  });
});
