import type { LoopgateEvent } from "../core/events.js";
import { renderEscalation } from "../core/step-escalation.js";
import type { ModelMessage, ToolCall } from "./model.js";

/** The built-in agent's position inside one attempt, folded from the run's events (so a resume is a fold). */
export interface AgentState {
  /** Index (in the attempt's events) of goal_set, or null before the goal is set. */
  goalSetAt: number | null;
  turn: number;
  stepsInTurn: number;
  /** Tool calls of the last model response that have not finished (in order). */
  pending: ToolCall[];
  /** Calls whose intent was recorded without a result: their effect is unknown. */
  inDoubt: { callId: string; name: string; mutating: boolean }[];
  /** The last response had no tool calls and the goal gate has not yet judged this turn. */
  awaitingEvaluation: boolean;
  /** The goal gate's last outcome for the current turn, if any. */
  evaluated: "completed" | "continuing" | "blocked" | null;
  continuationQueued: boolean;
  capped: boolean;
  lastText: string;
  messages: ModelMessage[];
}

/** Run-wide usage, for the token and cost budgets and the scripted model's position. */
export interface AgentUsage {
  responses: number;
  tokens: number;
  costUsd: number;
}

/** The events of attempt `n` (after its attempt_started). */
export function attemptEvents(events: readonly LoopgateEvent[], n: number): LoopgateEvent[] {
  let seen = 0;
  let start = -1;
  for (let i = 0; i < events.length; i++)
    if (events[i]?.type === "attempt_started" && ++seen === n) {
      start = i + 1;
      break;
    }
  if (start < 0) return [];
  const end = events.findIndex(
    (e, i) => i >= start && (e.type === "attempt_started" || e.type === "attempt_finished"),
  );
  return events.slice(start, end < 0 ? undefined : end);
}

/** Sums usage over the whole run. */
export function agentUsage(events: readonly LoopgateEvent[]): AgentUsage {
  let responses = 0;
  let tokens = 0;
  let costUsd = 0;
  for (const e of events)
    if (e.type === "model_responded") {
      responses++;
      tokens += e.data.input_tokens + e.data.output_tokens;
      costUsd += e.data.cost_usd ?? 0;
    }
  return { responses, tokens, costUsd };
}

/** Folds one attempt's agent events; `prompt` is the attempt's opening user message. */
export function foldAgent(events: readonly LoopgateEvent[], prompt: string): AgentState {
  const s: AgentState = {
    goalSetAt: null,
    turn: 1,
    stepsInTurn: 0,
    pending: [],
    inDoubt: [],
    awaitingEvaluation: false,
    evaluated: null,
    continuationQueued: false,
    capped: false,
    lastText: "",
    messages: [{ role: "user", content: prompt, origin: "operator" }],
  };
  const names = new Map<string, string>();
  events.forEach((e, i) => {
    switch (e.type) {
      case "goal_set":
        s.goalSetAt = i;
        break;
      case "model_responded": {
        const calls = e.data.tool_calls.map((c) => ({ id: c.id, name: c.name, args: c.args }));
        for (const c of calls) names.set(c.id, c.name);
        s.messages.push({ role: "assistant", text: e.data.text, toolCalls: calls });
        s.stepsInTurn++;
        s.pending = calls;
        s.awaitingEvaluation = calls.length === 0;
        s.lastText = e.data.text;
        break;
      }
      case "tool_call_started":
        s.inDoubt.push({ callId: e.data.call_id, name: e.data.name, mutating: e.data.mutating });
        break;
      case "tool_call_finished":
      case "tool_call_abandoned": {
        const id = e.data.call_id;
        s.inDoubt = s.inDoubt.filter((c) => c.callId !== id);
        s.pending = s.pending.filter((c) => c.id !== id);
        const finished = e.type === "tool_call_finished";
        s.messages.push({
          role: "tool",
          callId: id,
          name: names.get(id) ?? "unknown",
          content: finished ? e.data.content : e.data.reason,
          isError: finished ? e.data.is_error : true,
        });
        break;
      }
      case "goal_evaluated":
        s.awaitingEvaluation = false;
        s.evaluated = e.data.outcome;
        break;
      case "continuation_queued":
        s.messages.push({ role: "user", content: e.data.text, origin: "continuation" });
        s.turn++;
        s.stepsInTurn = 0;
        s.evaluated = null;
        s.continuationQueued = false;
        s.awaitingEvaluation = false;
        break;
      case "budget_exhausted":
        s.capped = true;
        break;
      case "step_appraised": {
        // The finding is rendered onto the todo result it appraises (before the model reads it).
        if (!e.data.rendered) break;
        const callId = e.data.call_id;
        const m = s.messages.findLast((x) => x.role === "tool" && x.callId === callId);
        if (m?.role === "tool") m.content = `${m.content}\n${e.data.rendered}`;
        break;
      }
      case "step_escalated": {
        // Only the fixed template is rendered, and only for revise_plan: the reviewer's words never are.
        const nudge = renderEscalation(e.data.decision);
        if (!nudge) break;
        const callId = e.data.call_id;
        const m = s.messages.findLast((x) => x.role === "tool" && x.callId === callId);
        if (m?.role === "tool") m.content = `${m.content}\n${nudge}`;
        break;
      }
      default:
        break;
    }
  });
  return s;
}
