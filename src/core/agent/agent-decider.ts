import {
  type EventData,
  type LoopgateEvent,
  type RunStreamEvent,
  runStreamOf,
} from "../events/loopgate-event.js";
import { agentEventTypes } from "../run/run-decider.js";
import type { GoalPredicate } from "../task/task.js";
import type { ToolCall } from "./agent-messages.js";
import { evolveStepWork, initialStepWork, type StepWorkState } from "./agent-steps.js";

const AGENT_EVENTS: ReadonlySet<string> = new Set(agentEventTypes);

/**
 * The built-in agent as a decider over the run's log: `evolveAgent` folds each appended event into the
 * attempt's control state (never the model's messages: see agent-messages.ts), and `nextAgentAction`
 * says the one thing to do next. The loop in agent/agent-loop.ts only carries actions out and records
 * the facts; a resume folds the log and asks the same function.
 */

/** What an attempt of the agent is configured with (fixed for the attempt). */
export interface AgentConfig {
  attempt: number;
  modelId: string;
  goal: { predicates: readonly GoalPredicate[]; maxTurns: number } | null;
  /** Heavy mode: the repair gate decides where the attempt would end. */
  selfCheck: boolean;
  /** Step escalation is on (a quarantined reviewer model is configured). */
  escalation: boolean;
  /** Declared plan-step checks: whether they execute, and how many per run. */
  stepChecks: { enabled: boolean; max: number };
  /** Tools whose successful result always carries facts: a crash between the result and its facts replays them. */
  factTools: readonly string[];
}

/** How the attempt's agent phase ended. */
export type AgentOutcome =
  | { kind: "stopped"; text: string }
  | { kind: "capped" }
  | { kind: "model_failed"; reason: string }
  /** The agent cannot run at all (its tools' sandbox failed its self-test): TOOL_FAILURE with the remedy. */
  | { kind: "tool_failure"; reason: string }
  | { kind: "interrupted" };

/** The attempt's control state. Run-wide counters (usage, checks, escalations) span every attempt. */
export interface AgentState {
  config: AgentConfig;
  /** Events folded so far (the run's), and attempts started among them. */
  seen: number;
  attemptsStarted: number;
  /** Whether the events being folded belong to `config.attempt`. */
  inAttempt: boolean;
  /** Events of this attempt folded so far; `goalSetAt` indexes them. */
  attemptLength: number;
  goalSetAt: number | null;
  turn: number;
  stepsInTurn: number;
  /** Tool calls of the last model response that have not finished (in order). */
  pending: readonly ToolCall[];
  /** Calls whose intent was recorded without a result: their effect is unknown. */
  inDoubt: readonly { callId: string; name: string; mutating: boolean }[];
  /** A fact-producing call whose result is recorded and whose facts are not (a crash between them). */
  factsDue: ToolCall | null;
  /** The last response had no tool calls and the turn has not been judged. */
  awaitingEvaluation: boolean;
  evaluated: "completed" | "continuing" | "blocked" | null;
  unmet: readonly string[];
  /** Goal predicates (non-command) probed in the current turn, by their one-line form. */
  probed: readonly string[];
  capped: boolean;
  lastText: string;
  /** The repair gate's decision for the current model stop, and whether its repair turn is queued. */
  repair: { decided: EventData<"repair_decided"> | null; queued: boolean };
  /** Consecutive failed model requests since the last response; `fatal` when the last one is not retried. */
  modelFailures: { retries: number; fatal: EventData<"model_failed"> | null };
  usage: { responses: number; tokens: number; costUsd: number };
  /** Plan steps: checks, appraisals and escalations still due (see agent-steps.ts). */
  steps: StepWorkState;
}

export function initialAgentState(config: AgentConfig): AgentState {
  return {
    config,
    seen: 0,
    attemptsStarted: 0,
    inAttempt: false,
    attemptLength: 0,
    goalSetAt: null,
    turn: 1,
    stepsInTurn: 0,
    pending: [],
    inDoubt: [],
    factsDue: null,
    awaitingEvaluation: false,
    evaluated: null,
    unmet: [],
    probed: [],
    capped: false,
    lastText: "",
    repair: { decided: null, queued: false },
    modelFailures: { retries: 0, fatal: null },
    usage: { responses: 0, tokens: 0, costUsd: 0 },
    steps: initialStepWork(),
  };
}

/** Folds one event of the run's log (any type; events of other attempts only move run-wide counters). */
export function evolveAgent(state: AgentState, event: RunStreamEvent): AgentState {
  const s = evolveRunWide({ ...state, seen: state.seen + 1 }, event, state.seen);
  if (event.type === "attempt_started") {
    const started = s.attemptsStarted + 1;
    return { ...s, attemptsStarted: started, inAttempt: started === s.config.attempt };
  }
  if (event.type === "attempt_finished") return { ...s, inAttempt: false };
  if (!s.inAttempt) return s;
  return evolveInAttempt({ ...s, attemptLength: s.attemptLength + 1 }, event, s.attemptLength);
}

/** Folds a list of events (a run's log) from the initial state. */
export function foldAgent(config: AgentConfig, events: readonly LoopgateEvent[]): AgentState {
  return runStreamOf(events).reduce(evolveAgent, initialAgentState(config));
}

/** What every attempt's events contribute: usage, check and escalation caps, step spans. */
function evolveRunWide(s: AgentState, e: RunStreamEvent, index: number): AgentState {
  const mine = (attempt: number) => s.inAttempt && attempt === s.config.attempt;
  switch (e.type) {
    case "model_responded":
      return {
        ...s,
        usage: {
          responses: s.usage.responses + 1,
          tokens: s.usage.tokens + e.data.input_tokens + e.data.output_tokens,
          costUsd: s.usage.costUsd + (e.data.cost_usd ?? 0),
        },
      };
    case "tool_call_started":
    case "tool_call_finished":
    case "tool_call_abandoned":
    case "todo_written":
    case "step_check_ran":
    case "step_appraised":
    case "step_escalated":
      return { ...s, steps: evolveStepWork(s.steps, e, index, mine) };
    case "run_started":
    case "workspace_observed":
    case "attempt_started":
    case "builder_finished":
    case "workspace_changed":
    case "finding_recorded":
    case "claim_recorded":
    case "gate_run_finished":
    case "attempt_finished":
    case "required_fix_issued":
    case "infrastructure_failed":
    case "run_finished":
    case "goal_set":
    case "model_failed":
    case "workspace_touched":
    case "goal_probed":
    case "goal_evaluated":
    case "continuation_queued":
    case "budget_exhausted":
    case "run_resumed":
    case "run_lease_taken":
    case "run_lease_renewed":
    case "judge_finished":
    case "self_check_plan_recorded":
    case "self_check_recorded":
    case "repair_decided":
    case "agent_tool_observed":
    case "agent_session_finished":
    case "agent_step_appraised":
    case "agent_goal_evaluated":
    case "hook_failed":
    case "stop_hook_answered":
      return s;
    default:
      return unreachable(e);
  }
}

/** What this attempt's own events do to its position. `index` is the event's place among the attempt's events. */
function evolveInAttempt(s: AgentState, e: RunStreamEvent, index: number): AgentState {
  // The agent event after a fact-producing result settles it: its facts were recorded right after it, or
  // none were due. Run events (a resume, a lease) do not: a crash between the result and its facts leaves it due.
  const settles = e.type !== "tool_call_finished" && AGENT_EVENTS.has(e.type);
  const t = s.factsDue && settles ? { ...s, factsDue: null } : s;
  switch (e.type) {
    case "goal_set":
      return { ...t, goalSetAt: index };
    case "model_responded": {
      const calls = e.data.tool_calls.map((c) => ({ id: c.id, name: c.name, args: c.args }));
      return {
        ...t,
        stepsInTurn: t.stepsInTurn + 1,
        pending: calls,
        awaitingEvaluation: calls.length === 0,
        lastText: e.data.text,
        repair: { decided: null, queued: false },
        modelFailures: { retries: 0, fatal: null },
      };
    }
    case "model_failed":
      return {
        ...t,
        modelFailures: {
          retries: t.modelFailures.retries + 1,
          fatal: e.data.backoff_ms === null ? e.data : null,
        },
      };
    case "tool_call_started":
      return {
        ...t,
        inDoubt: [...t.inDoubt, { callId: e.data.call_id, name: e.data.name, mutating: e.data.mutating }],
      };
    case "tool_call_finished":
    case "tool_call_abandoned": {
      const id = e.data.call_id;
      const call = t.pending.find((c) => c.id === id) ?? null;
      const succeeded = e.type === "tool_call_finished" && e.data.valid && !e.data.is_error;
      return {
        ...t,
        inDoubt: t.inDoubt.filter((c) => c.callId !== id),
        pending: t.pending.filter((c) => c.id !== id),
        factsDue: succeeded && call && t.config.factTools.includes(call.name) ? call : null,
      };
    }
    case "goal_probed":
      return { ...t, probed: [...t.probed, predicateKey(e.data.predicate)] };
    case "goal_evaluated":
      return { ...t, awaitingEvaluation: false, evaluated: e.data.outcome, unmet: e.data.unmet };
    case "continuation_queued":
      return {
        ...t,
        turn: t.turn + 1,
        stepsInTurn: 0,
        evaluated: null,
        awaitingEvaluation: false,
        probed: [],
        repair: { ...t.repair, queued: t.repair.decided !== null },
      };
    case "budget_exhausted":
      return { ...t, capped: true };
    case "repair_decided":
      return { ...t, repair: { decided: e.data, queued: false } };
    case "run_started":
    case "workspace_observed":
    case "attempt_started":
    case "builder_finished":
    case "workspace_changed":
    case "finding_recorded":
    case "claim_recorded":
    case "gate_run_finished":
    case "attempt_finished":
    case "required_fix_issued":
    case "infrastructure_failed":
    case "run_finished":
    case "workspace_touched":
    case "run_resumed":
    case "run_lease_taken":
    case "run_lease_renewed":
    case "judge_finished":
    case "self_check_plan_recorded":
    case "self_check_recorded":
    case "todo_written":
    case "step_check_ran":
    case "step_appraised":
    case "step_escalated":
    case "agent_tool_observed":
    case "agent_session_finished":
    case "agent_step_appraised":
    case "agent_goal_evaluated":
    case "hook_failed":
    case "stop_hook_answered":
      return t;
    default:
      return unreachable(e);
  }
}

function unreachable(e: never): never {
  throw new Error(`unhandled event ${JSON.stringify((e as { type?: unknown }).type)}`);
}

/** A predicate's identity in a probe: its one key and value. */
export function predicateKey(p: Readonly<Record<string, string>>): string {
  const [k, v] = Object.entries(p)[0] ?? ["?", "?"];
  return `${k}\u0000${v}`;
}
