import { describe, expect, it } from "vitest";
import { scriptedModel } from "../../../src/agent/models/scripted-model.js";
import { escalateStep, escalationMessage } from "../../../src/agent/todo/escalation.js";
import { escalation } from "../../../src/agent/todo/step-work.js";
import { type AgentConfig, foldAgent } from "../../../src/core/agent/agent-decider.js";
import { type AgentLimits, nextAgentAction } from "../../../src/core/agent/agent-next.js";
import {
  claimsCheckable,
  type EscalationInput,
  escalationTrigger,
  isSpanOutlier,
  looksLikeCheck,
  MAX_ESCALATIONS,
  nextEscalation,
  REVISE_PLAN_NUDGE,
  renderEscalation,
} from "../../../src/core/agent/step-escalation.js";
import type { LoopgateEvent } from "../../../src/core/events/loopgate-event.js";

const input = (over: Partial<EscalationInput>): EscalationInput => ({
  step: "edit the file",
  expect: null,
  check: null,
  checkRan: false,
  calls: 1,
  spanCalls: [{ name: "edit_file", subject: "lib/a.js", exit_code: null }],
  meanCalls: 1,
  ...over,
});

const ev = (type: string, data: Record<string, unknown>) => ({ type, data }) as unknown as LoopgateEvent;

/** A run whose one step "make the tests pass" landed after an `echo` call: an unverified claim. */
function claimRun(step = "make the tests pass", command = "echo hi"): LoopgateEvent[] {
  return [
    ev("todo_written", {
      attempt: 1,
      call_id: "c1",
      items: [{ content: step, status: "in_progress", check: null, check_frozen: false }],
      changes: [],
      completed: [],
      reopened: [],
    }),
    ev("tool_call_started", { attempt: 1, call_id: "c2", name: "bash" }),
    ev("tool_call_finished", {
      attempt: 1,
      call_id: "c2",
      name: "bash",
      valid: true,
      is_error: false,
      exit_code: 0,
      subject: command,
      content: "hi",
    }),
    ev("todo_written", {
      attempt: 1,
      call_id: "c3",
      items: [{ content: step, status: "completed", check: null, check_frozen: false }],
      changes: [],
      completed: [step],
      reopened: [],
    }),
    ev("step_appraised", {
      attempt: 1,
      call_id: "c3",
      step,
      finding: "landed",
      measured: true,
      calls: 1,
      check: null,
      rendered: "",
    }),
  ];
}

describe("span outlier: at least 3× the plan's mean calls and at least 6 calls", () => {
  it("fires at the boundary and not below either bound", () => {
    expect(isSpanOutlier(6, 2)).toBe(true);
    expect(isSpanOutlier(5, 1)).toBe(false); // 5× the mean, but under 6 calls
    expect(isSpanOutlier(8, 3)).toBe(false); // 8 calls, but under 3× the mean
    expect(isSpanOutlier(9, 3)).toBe(true);
    expect(isSpanOutlier(6, 0)).toBe(true);
    expect(isSpanOutlier(100, null)).toBe(false); // no baseline: a first step cannot be an outlier
  });
  it("is read before an unverified claim", () => {
    expect(escalationTrigger(input({ step: "tests pass", calls: 6, meanCalls: 2 }))).toBe("span_outlier");
  });
});

describe("unverified claim: checkable words and nothing check-like in the span", () => {
  it.each(["make the tests pass", "the build builds clean", "Suite is all green", "code compiles cleanly"])(
    "reads %j as checkable",
    (w) => expect(claimsCheckable(w)).toBe(true),
  );
  it.each(["edit lib/answer.js", "write the test file", "read the docs"])(
    "does not read %j as checkable",
    (w) => expect(claimsCheckable(w)).toBe(false),
  );
  it("a bash call running tests, a build or a type-check counts as check-like; other calls do not", () => {
    for (const c of [
      "npm test",
      "npx vitest run",
      "pytest -q",
      "cargo test",
      "go test ./...",
      "npx tsc --noEmit",
    ])
      expect(looksLikeCheck({ name: "bash", subject: c, exit_code: 0 })).toBe(true);
    expect(looksLikeCheck({ name: "bash", subject: "echo hi", exit_code: 0 })).toBe(false);
    expect(looksLikeCheck({ name: "read_file", subject: "test/a.test.js", exit_code: null })).toBe(false);
  });
  it("fires without a check-like call, and not with one or with a declared check that ran", () => {
    const claim = input({ step: "make the tests pass" });
    expect(escalationTrigger(claim)).toBe("unverified_claim");
    expect(
      escalationTrigger({ ...claim, spanCalls: [{ name: "bash", subject: "npm test", exit_code: 0 }] }),
    ).toBeNull();
    expect(escalationTrigger({ ...claim, checkRan: true })).toBeNull();
    expect(escalationTrigger(input({ expect: "tests pass" }))).toBe("unverified_claim");
    expect(escalationTrigger(input({}))).toBeNull();
  });
});

describe("nextEscalation over a run's events", () => {
  it("finds a landed step that trips a trigger, and not one with a finding", () => {
    const next = nextEscalation(claimRun(), 1);
    expect(next).toMatchObject({ trigger: "unverified_claim", callId: "c3" });
    expect(next?.input.spanCalls).toEqual([{ name: "bash", subject: "echo hi", exit_code: 0 }]);
    const failed = claimRun().map((e) =>
      e.type === "step_appraised" ? ev("step_appraised", { ...e.data, finding: "ended_on_failure" }) : e,
    );
    expect(nextEscalation(failed, 1)).toBeNull();
    expect(nextEscalation(claimRun("make the tests pass", "npm test"), 1)).toBeNull();
  });
  it("stops at the cap of 5 escalations per run", () => {
    const used = (n: number) =>
      Array.from({ length: n }, (_, i) =>
        ev("step_escalated", {
          attempt: 1,
          call_id: `x${i}`,
          step: `s${i}`,
          trigger: "span_outlier",
          decision: "inconclusive",
          escalations_used: i + 1,
        }),
      );
    expect(MAX_ESCALATIONS).toBe(5);
    expect(nextEscalation([...used(4), ...claimRun()], 1)).not.toBeNull();
    expect(nextEscalation([...used(5), ...claimRun()], 1)).toBeNull();
  });
  it("does not escalate a step twice", () => {
    const events = [
      ...claimRun(),
      ev("step_escalated", {
        attempt: 1,
        call_id: "c3",
        step: "make the tests pass",
        trigger: "unverified_claim",
        decision: "carry_on",
        escalations_used: 1,
      }),
    ];
    expect(nextEscalation(events, 1)).toBeNull();
  });
});

describe("the quarantined call", () => {
  const MARKER = "ZQX-REASON-MARKER-7731";
  const decide = (args: unknown) => [{ text: "", tool_calls: [{ name: "submit_decision", args }] }];

  it("returns the decision only; the reason never leaves it, and the template carries no free text", async () => {
    const model = scriptedModel(decide({ decision: "revise_plan", reason: MARKER }));
    const d = await escalateStep(model, input({ step: "make the tests pass" }), "unverified_claim");
    expect(d).toBe("revise_plan");
    expect(renderEscalation(d)).toBe(REVISE_PLAN_NUDGE);
    expect(renderEscalation(d)).not.toContain(MARKER);
    expect(renderEscalation("carry_on")).toBe("");
    expect(renderEscalation("inconclusive")).toBe("");
    // A fresh conversation: one user message, one tool.
    expect(model.requests[0]?.messages).toHaveLength(1);
    expect(model.requests[0]?.tools.map((t) => t.name)).toEqual(["submit_decision"]);
  });
  it.each([
    ["an unknown decision", decide({ decision: "abort" })],
    ["an extra field", decide({ decision: "carry_on", note: "x" })],
    ["plain text", [{ text: '{"decision":"carry_on"}' }]],
    ["another tool", [{ text: "", tool_calls: [{ name: "bash", args: { command: "ls" } }] }]],
  ])("is inconclusive on %s", async (_, script) => {
    expect(await escalateStep(scriptedModel(script), input({}), "span_outlier")).toBe("inconclusive");
  });
  it("is inconclusive when the model fails or does not answer in time", async () => {
    expect(await escalateStep(scriptedModel([]), input({}), "span_outlier")).toBe("inconclusive");
    const slow = { id: "slow", generate: () => new Promise<never>(() => {}) };
    expect(await escalateStep(slow, input({}), "span_outlier", 10)).toBe("inconclusive");
  });
  it("shows the step, its calls and the plan's mean", () => {
    const m = escalationMessage(input({ step: "make the tests pass", meanCalls: 2 }), "unverified_claim");
    expect(m).toContain("make the tests pass");
    expect(m).toContain('edit_file "lib/a.js" → no exit code');
    expect(m).toContain("2.0");
  });
});

const config = (escalation: boolean): AgentConfig => ({
  attempt: 1,
  modelId: "scripted:test",
  goal: null,
  selfCheck: false,
  escalation,
  stepChecks: { enabled: true, max: 16 },
  factTools: ["todo"],
});
const attemptStarted = ev("attempt_started", { attempt: 1, required_fix: null });
const limits: AgentLimits = { stopWhen: [] };

describe("off by default", () => {
  it("without an escalation model, a triggering step is never escalated", () => {
    const state = foldAgent(config(false), [attemptStarted, ...claimRun()]);
    expect(nextAgentAction(state, limits, 0).kind).not.toBe("escalate_step");
    // The model stopped nowhere yet (no response): the next action is a model request.
    expect(nextAgentAction(state, limits, 0)).toEqual({ kind: "call_model", turn: 1, step: 1, retry: 0 });
  });
  it("with one, the decider picks the step nextEscalation picks, and it records step_escalated with the decision and the count", async () => {
    const events = [attemptStarted, ...claimRun()];
    const action = nextAgentAction(foldAgent(config(true), events), limits, 0);
    const expected = nextEscalation(events, 1);
    expect(expected).not.toBeNull();
    expect(action).toEqual({
      kind: "escalate_step",
      callId: "c3",
      step: "make the tests pass",
      trigger: "unverified_claim",
      input: expected?.input,
      used: 0,
    });
    const model = scriptedModel([
      { text: "", tool_calls: [{ name: "submit_decision", args: { decision: "carry_on" } }] },
    ]);
    if (action.kind !== "escalate_step") throw new Error("unreachable");
    expect(await escalation(model, { attempt: 1, ...action })).toEqual({
      type: "step_escalated",
      data: {
        attempt: 1,
        call_id: "c3",
        step: "make the tests pass",
        trigger: "unverified_claim",
        decision: "carry_on",
        escalations_used: 1,
      },
    });
  });
  it("the decider escalates exactly when nextEscalation does, over the cases above", () => {
    const failed = claimRun().map((e) =>
      e.type === "step_appraised"
        ? ({ ...e, data: { ...e.data, finding: "ended_on_failure" } } as LoopgateEvent)
        : e,
    );
    const used = (k: number) =>
      Array.from({ length: k }, (_, i) =>
        ev("step_escalated", {
          attempt: 1,
          call_id: `x${i}`,
          step: "s",
          trigger: "span_outlier",
          decision: "carry_on",
          escalations_used: i + 1,
        }),
      );
    const cases = [
      claimRun(),
      failed,
      claimRun("make the tests pass", "npm test"),
      [...used(4), ...claimRun()],
      [...used(5), ...claimRun()],
      claimRun("rename the helper"),
    ];
    for (const c of cases) {
      const events = [attemptStarted, ...c];
      const a = nextAgentAction(foldAgent(config(true), events), limits, 0);
      const n = nextEscalation(events, 1);
      expect(
        a.kind === "escalate_step" ? { callId: a.callId, trigger: a.trigger, input: a.input } : null,
      ).toEqual(n ? { callId: n.callId, trigger: n.trigger, input: n.input } : null);
    }
  });
});
