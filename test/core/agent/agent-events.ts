import type { AgentConfig } from "../../../src/core/agent/agent-decider.js";
import type { EventData, EventType, LoopgateEvent, Origin } from "../../../src/core/events/loopgate-event.js";

/** Builders of agent events for decider tests: `{ id, type, data, meta }` with a fixed clock. */
let seq = 0;
export function ev<T extends EventType>(
  type: T,
  data: EventData<T>,
  origin: Origin = "runtime",
): LoopgateEvent {
  return { id: `e${++seq}`, type, data, meta: { at: "2026-01-01T00:00:00.000Z", origin } } as LoopgateEvent;
}

export const config = (over: Partial<AgentConfig> = {}): AgentConfig => ({
  attempt: 1,
  modelId: "scripted:test",
  goal: null,
  selfCheck: false,
  escalation: false,
  stepChecks: { enabled: true, max: 16 },
  factTools: ["todo"],
  ...over,
});

export const attempt = (n = 1) => ev("attempt_started", { attempt: n, required_fix: null });
export const attemptDone = (n = 1) => ev("attempt_finished", { attempt: n, passed: false });

export const responded = (
  calls: { id: string; name: string; args?: unknown }[] = [],
  over: Partial<EventData<"model_responded">> = {},
) =>
  ev(
    "model_responded",
    {
      attempt: 1,
      turn: 1,
      step: 1,
      text: calls.length ? "working" : "done",
      tool_calls: calls.map((c) => ({ id: c.id, name: c.name, args: c.args ?? {} })),
      input_tokens: 10,
      output_tokens: 5,
      cost_usd: 0.01,
      finish_reason: calls.length ? "tool-calls" : "stop",
      ...over,
    },
    "model",
  );

export const started = (id: string, name: string, mutating: boolean) =>
  ev("tool_call_started", { attempt: 1, turn: 1, call_id: id, name, args: {}, mutating });

export const finished = (id: string, name: string, over: Partial<EventData<"tool_call_finished">> = {}) =>
  ev("tool_call_finished", {
    attempt: 1,
    call_id: id,
    name,
    valid: true,
    is_error: false,
    exit_code: 0,
    subject: name,
    content: `${name} ok`,
    duration_ms: 1,
    ...over,
  });

type Item = EventData<"todo_written">["items"][number];
export const item = (content: string, status: Item["status"], check: string | null = null): Item => ({
  content,
  status,
  check,
  check_frozen: status === "completed" && check !== null,
});
export const written = (callId: string, items: Item[], completed: string[] = []) =>
  ev("todo_written", { attempt: 1, call_id: callId, items, changes: [], completed, reopened: [] });

export const evaluated = (outcome: "completed" | "continuing" | "blocked", unmet: string[] = [], turn = 1) =>
  ev("goal_evaluated", { attempt: 1, turn, outcome, unmet, reason: outcome });

export const repairDecided = (decision: "allow" | "repair" | "cap_reached", turn = 1) =>
  ev("repair_decided", {
    attempt: 1,
    turn,
    decision,
    semantic_status: decision === "allow" ? "complete" : "incomplete",
    blockers: decision === "allow" ? [] : [{ code: "missing_self_check", detail: "" }],
    repairs_used: 0,
    cap: 1,
    warnings: [],
  });
