import { describe, expect, it } from "vitest";
import { projectMessages } from "../../../src/core/agent/agent-messages.js";
import {
  agentUsage,
  attemptEvents,
  inDoubtCalls,
  lastMutatingResult,
} from "../../../src/core/run/agent-projections.js";
import { projectEnvelope } from "../../../src/core/run/envelope.js";
import { attempt, attemptDone, ev, finished, responded, started } from "../agent/agent-events.js";

describe("attemptEvents", () => {
  it("is the events after the attempt's start, up to the next start or finish", () => {
    const a = responded();
    const b = responded([], { attempt: 2 });
    expect(attemptEvents([attempt(1), a, attemptDone(1), attempt(2), b], 1)).toEqual([a]);
    expect(attemptEvents([attempt(1), a, attemptDone(1), attempt(2), b], 2)).toEqual([b]);
    expect(attemptEvents([attempt(1), a], 3)).toEqual([]);
  });
});

describe("agentUsage", () => {
  it("sums tokens and priced cost; an unpriced response leaves the cost unknown", () => {
    expect(agentUsage([responded(), responded()])).toEqual({
      responses: 2,
      tokens: 30,
      costUsd: 0.02,
      priced: true,
    });
    expect(agentUsage([responded([], { cost_usd: null })])).toEqual({
      responses: 1,
      tokens: 15,
      costUsd: 0,
      priced: false,
    });
    expect(agentUsage([])).toEqual({ responses: 0, tokens: 0, costUsd: 0, priced: false });
  });
});

describe("resume projections", () => {
  it("inDoubtCalls: started without a result or an abandonment", () => {
    const events = [
      started("c1", "bash", true),
      finished("c1", "bash"),
      started("c2", "write_file", true),
      started("c3", "read_file", false),
      ev("tool_call_abandoned", { attempt: 1, call_id: "c2", reason: "interrupted" }),
    ];
    expect(inDoubtCalls(events)).toEqual([{ callId: "c3", name: "read_file", mutating: false }]);
  });
  it("lastMutatingResult follows the recorded intent, not the tool's name", () => {
    const events = [
      started("c1", "custom_writer", true),
      finished("c1", "custom_writer"),
      started("c2", "bash", false),
      finished("c2", "bash"),
    ];
    expect(lastMutatingResult(events)).toEqual({ callId: "c1" });
    expect(lastMutatingResult([started("c3", "todo", false), finished("c3", "todo")])).toBeNull();
  });
});

describe("projectMessages", () => {
  it("rebuilds the conversation: prompt, responses, results, continuations, and findings on the todo result", () => {
    const events = [
      responded([{ id: "t1", name: "todo", args: { items: [] } }], { text: "plan" }),
      started("t1", "todo", false),
      finished("t1", "todo", { content: "plan: (empty)" }),
      ev("step_appraised", {
        attempt: 1,
        call_id: "t1",
        step: "s",
        finding: "null_step",
        measured: true,
        calls: 0,
        check: null,
        rendered: "[loopgate] finding",
      }),
      ev("tool_call_abandoned", { attempt: 1, call_id: "x1", reason: "rolled back" }),
      ev("continuation_queued", { attempt: 1, turn: 1, text: "go on" }, "continuation"),
    ];
    expect(projectMessages(events, "Fix it.")).toEqual([
      { role: "user", content: "Fix it.", origin: "operator" },
      { role: "assistant", text: "plan", toolCalls: [{ id: "t1", name: "todo", args: { items: [] } }] },
      {
        role: "tool",
        callId: "t1",
        name: "todo",
        content: "plan: (empty)\n[loopgate] finding",
        isError: false,
      },
      { role: "tool", callId: "x1", name: "unknown", content: "rolled back", isError: true },
      { role: "user", content: "go on", origin: "continuation" },
    ]);
  });
});

describe("the envelope's audit usage", () => {
  const run = (extra: ReturnType<typeof responded>[]) => [
    ev("run_started", {
      task_id: "t",
      task_path: "/t/task.yaml",
      task_digest: "d",
      builder: { kind: "agent", command: "scripted:x" },
      max_attempts: 1,
      gates: [{ id: "unit", kind: "subprocess" }],
      sandbox: "none",
      run_dir: "/t/run",
    } as never),
    ...extra,
    ev("run_finished", { status: "ESCALATED", reason: "r" }),
  ];
  it("reports the agent's tokens and cost, and null without a model response", () => {
    const env = projectEnvelope("r1", run([responded(), responded([], { cost_usd: 0.02 })]));
    expect(env?.audit).toMatchObject({ tokens: 30, cost: 0.03 });
    expect(projectEnvelope("r2", run([]))?.audit).toMatchObject({ tokens: null, cost: null });
    expect(projectEnvelope("r3", run([responded([], { cost_usd: null })]))?.audit).toMatchObject({
      tokens: 15,
      cost: null,
    });
  });
});
