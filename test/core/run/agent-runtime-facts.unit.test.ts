// Facts an external agent's runtime reports through loopgate's hooks: recorded, never deciding the verdict.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { LoopgateEvent } from "../../../src/core/events/loopgate-event.js";
import { projectEnvelope } from "../../../src/core/run/envelope.js";
import {
  type AgentRuntimeEventBody,
  decide,
  type EventBody,
  evolve,
  foldRun,
  initialState,
  verdict,
} from "../../../src/core/run/run-decider.js";
import { given } from "../../support/decider.js";

const runDecider = { initialState, evolve, decide };
const started: EventBody = {
  type: "run_started",
  data: {
    task_id: "t",
    task_path: "/t/task.yaml",
    task_digest: "d",
    builder: { kind: "claude-code", command: "claude" },
    max_attempts: 2,
    gates: [{ id: "g", kind: "subprocess" }],
    sandbox: "bubblewrap",
    run_dir: "/r",
  },
};
const attempt = (n: number): EventBody => ({
  type: "attempt_started",
  data: { attempt: n, required_fix: null },
});
const tool = (n: number, exit: number | null): AgentRuntimeEventBody => ({
  type: "agent_tool_observed",
  data: {
    attempt: n,
    agent: "claude-code",
    hook_event: exit === 0 ? "PostToolUse" : "PostToolUseFailure",
    session_id: "s",
    tool: "Bash",
    command: "npm test",
    exit_code: exit,
    excerpt: "",
  },
});
const session = (cost: number, input: number, output: number): EventBody => ({
  type: "agent_session_finished",
  data: {
    attempt: 1,
    agent: "claude-code",
    session_id: "s",
    exit_code: 0,
    subtype: "success",
    is_error: false,
    num_turns: 2,
    total_cost_usd: cost,
    input_tokens: input,
    output_tokens: output,
    result_excerpt: "done",
  },
});

describe("agent_runtime facts in a run", () => {
  it("are recorded as given while the run is open", () => {
    given(runDecider, [started, attempt(1)])
      .when({ type: "record_agent_runtime", event: tool(1, 0) })
      .thenEvents([tool(1, 0)]);
  });

  it("are refused for an attempt that has not started, and after the verdict", () => {
    given(runDecider, [started, attempt(1)])
      .when({ type: "record_agent_runtime", event: tool(2, 0) })
      .thenError(/attempt 2 has not started/);
    given(runDecider, [
      started,
      attempt(1),
      { type: "infrastructure_failed", data: { attempt: 1, reason: "x" } },
      { type: "run_finished", data: { status: "TOOL_FAILURE", reason: "x" } },
    ])
      .when({ type: "record_agent_runtime", event: tool(1, 0) })
      .thenError(/has finished/);
  });

  it("never make a run SUCCESS: any number of exit-0 tool facts and no passed gate is not SUCCESS", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(0, 1, null), { maxLength: 30 }), (exits) => {
        const events = [started, attempt(1), ...exits.map((e) => tool(1, e))];
        const state = foldRun(events);
        expect(verdict(state).status).not.toBe("SUCCESS");
      }),
    );
  });

  it("the envelope's audit sums Claude's result lines: cost and tokens (input + output)", () => {
    const bodies: EventBody[] = [
      started,
      attempt(1),
      session(0.25, 100, 10),
      session(0.5, 200, 20),
      { type: "infrastructure_failed", data: { attempt: 1, reason: "x" } },
      { type: "run_finished", data: { status: "TOOL_FAILURE", reason: "x" } },
    ];
    const events = bodies.map(
      (b, i) =>
        ({
          ...b,
          id: `e${i}`,
          meta: { at: "2026-12-01T00:00:00.000Z", origin: "agent_runtime" },
        }) as LoopgateEvent,
    );
    const env = projectEnvelope("r", events);
    expect(env?.audit.cost).toBe(0.75);
    expect(env?.audit.tokens).toBe(330);
  });
});
