import type { LoopgateEvent } from "../events/loopgate-event.js";

/** Run-wide usage of the built-in agent: for the token and cost budgets, the envelope and the scripted model's position. */
export interface AgentUsage {
  responses: number;
  tokens: number;
  costUsd: number;
  /** Whether any response reported a price (false: the cost is unknown, not zero). */
  priced: boolean;
}

/** The events of attempt `n` (after its attempt_started, up to the next attempt_started or attempt_finished). */
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

/** Sums the model's usage over `events` (a run, or one attempt's events). */
export function agentUsage(events: readonly LoopgateEvent[]): AgentUsage {
  let responses = 0;
  let tokens = 0;
  let costUsd = 0;
  let priced = false;
  for (const e of events)
    if (e.type === "model_responded") {
      responses++;
      tokens += e.data.input_tokens + e.data.output_tokens;
      if (e.data.cost_usd !== null) {
        costUsd += e.data.cost_usd;
        priced = true;
      }
    }
  return { responses, tokens, costUsd, priced };
}

/**
 * The last finished tool call among `events` whose recorded intent said it can change the workspace
 * (`tool_call_started.mutating`), or null. A resume observes after it, so a crash between its result
 * and its observation cannot hide the change.
 */
export function lastMutatingResult(events: readonly LoopgateEvent[]): { callId: string } | null {
  const mutating = new Set<string>();
  let last: string | null = null;
  for (const e of events)
    if (e.type === "tool_call_started" && e.data.mutating) mutating.add(e.data.call_id);
    else if (e.type === "tool_call_finished" && mutating.has(e.data.call_id)) last = e.data.call_id;
  return last === null ? null : { callId: last };
}

/** Calls among `events` whose intent was recorded without a result or an abandonment: their effect is unknown. */
export function inDoubtCalls(
  events: readonly LoopgateEvent[],
): { callId: string; name: string; mutating: boolean }[] {
  const open = new Map<string, { callId: string; name: string; mutating: boolean }>();
  for (const e of events)
    if (e.type === "tool_call_started")
      open.set(e.data.call_id, { callId: e.data.call_id, name: e.data.name, mutating: e.data.mutating });
    else if (e.type === "tool_call_finished" || e.type === "tool_call_abandoned") open.delete(e.data.call_id);
  return [...open.values()];
}
