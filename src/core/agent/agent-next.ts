// What the built-in agent does next: the one effect `nextAgentAction` decides from the folded state
// (agent-decider.ts), the stop rules and the time; the runner carries it out and records its facts.
import type { LoopgateEvent } from "../events/loopgate-event.js";
import type { Decider } from "../kernel/decider.js";
import type { Blocker } from "../self-check/audit.js";
import { repairPrompt } from "../self-check/repair-gate.js";
import type { GoalPredicate } from "../task/task.js";
import type { BudgetCap, StopCondition } from "./agent-budget.js";
import { firstStop } from "./agent-budget.js";
import {
  type AgentConfig,
  type AgentOutcome,
  type AgentState,
  evolveAgent,
  initialAgentState,
  predicateKey,
} from "./agent-decider.js";
import type { ToolCall } from "./agent-messages.js";
import { nextStepWork, type StepAction } from "./agent-steps.js";
import { continuationPrompt } from "./stop-condition.js";

/**
 * The agent's fold as a kernel decider. Its state needs the attempt's config, so it is made per attempt.
 * The agent records no events of its own decision: its `decide` is `nextAgentAction` (the one effect to
 * carry out next, from the state, the stop rules and the time), and the facts the runner records while
 * carrying it out are what `evolve` folds. `initialState` and `evolve` are the Decider's; `next` stands
 * where a decide returning events would.
 */
export function agentDecider(config: AgentConfig): Pick<
  Decider<AgentState, never, LoopgateEvent>,
  "initialState" | "evolve"
> & {
  next(state: AgentState, limits: AgentLimits, now: number): AgentAction;
} {
  return { initialState: () => initialAgentState(config), evolve: evolveAgent, next: nextAgentAction };
}

/** The one effect to carry out next. */
export type AgentAction =
  | { kind: "stop"; outcome: AgentOutcome }
  | { kind: "set_goal" }
  /** Run call `call`; `intentRecorded`: a read-only call left in doubt by a crash, repeated under its intent. */
  | { kind: "run_tool"; call: ToolCall; intentRecorded: boolean; mutating: boolean | null }
  /** A fact-producing read-only call whose result was recorded before a crash: re-run it and record only its facts. */
  | { kind: "replay_tool_facts"; call: ToolCall }
  | StepAction
  | { kind: "probe_goal"; turn: number; predicate: GoalPredicate }
  | { kind: "evaluate_goal"; turn: number; maxTurns: number; windowStart: number }
  /** The repair gate where the attempt would end; `turnsLeft` false: a repair turn would break the turn cap. */
  | { kind: "decide_repair"; turn: number; turnsLeft: boolean }
  | { kind: "queue_continuation"; turn: number; text: string }
  | { kind: "record_cap"; cap: BudgetCap }
  | { kind: "call_model"; turn: number; step: number; retry: number };

/** The stop rules checked before each step (see agent-budget.ts). */
export interface AgentLimits {
  stopWhen: readonly StopCondition[];
}

/**
 * The agent's next action, from its state alone. The rules, in order: an interrupt stops; a recorded cap
 * stops; a non-retried model failure stops; the goal is set first; a fact-producing result's lost facts are
 * replayed; pending tool calls run one at a time; the batch's completed steps are checked, then appraised,
 * then escalated; a model stop is judged by the goal gate (probes, then evaluation) and the repair gate;
 * an unmet goal queues a continuation; a cap applies before a model request; else the model is called.
 */
export function nextAgentAction(state: AgentState, limits: AgentLimits, now: number): AgentAction {
  const s = state;
  const c = s.config;
  const stop = firstStop(limits.stopWhen, { stepsInTurn: s.stepsInTurn, usage: s.usage, now });
  if (stop?.kind === "interrupted") return { kind: "stop", outcome: { kind: "interrupted" } };
  if (s.capped) return { kind: "stop", outcome: { kind: "capped" } };
  const fatal = s.modelFailures.fatal;
  if (fatal) {
    const why = fatal.retryable ? `after ${fatal.retry} retries` : "(not retryable)";
    const reason = `model ${c.modelId} failed: ${fatal.kind}: ${fatal.message} ${why}`;
    return { kind: "stop", outcome: { kind: "model_failed", reason } };
  }
  if (c.goal && s.goalSetAt === null) return { kind: "set_goal" };
  if (s.factsDue) return { kind: "replay_tool_facts", call: s.factsDue };
  const call = s.pending[0];
  if (call) {
    const doubt = s.inDoubt.find((d) => d.callId === call.id);
    return { kind: "run_tool", call, intentRecorded: doubt !== undefined, mutating: doubt?.mutating ?? null };
  }
  const step = nextStepWork(s.steps, c);
  if (step) return step;
  const turnEnd = atTurnEnd(s);
  if (turnEnd) return turnEnd;
  if (stop?.kind === "cap") return { kind: "record_cap", cap: stop.cap };
  return { kind: "call_model", turn: s.turn, step: s.stepsInTurn + 1, retry: s.modelFailures.retries };
}

/** The model stopped calling tools: the goal gate, the repair gate and continuations decide what follows. */
function atTurnEnd(s: AgentState): AgentAction | null {
  const c = s.config;
  const stopped: AgentAction = { kind: "stop", outcome: { kind: "stopped", text: s.lastText } };
  const repair = (turnsLeft: boolean): AgentAction | null => {
    if (!c.selfCheck) return null;
    const d = s.repair.decided;
    if (!d) return { kind: "decide_repair", turn: s.turn, turnsLeft };
    if (d.decision === "repair" && !s.repair.queued)
      return {
        kind: "queue_continuation",
        turn: s.turn,
        text: repairPrompt(d.blockers as Blocker[], d.repairs_used, d.cap),
      };
    return null;
  };
  if (s.awaitingEvaluation) {
    if (!c.goal) return repair(true) ?? stopped;
    const unprobed = c.goal.predicates.find(
      (p) => !("command_succeeded" in p) && !s.probed.includes(predicateKey(p as Record<string, string>)),
    );
    if (unprobed) return { kind: "probe_goal", turn: s.turn, predicate: unprobed };
    return {
      kind: "evaluate_goal",
      turn: s.turn,
      maxTurns: c.goal.maxTurns,
      windowStart: (s.goalSetAt ?? -1) + 1,
    };
  }
  if (s.evaluated === "completed") return repair(true) ?? stopped;
  // A blocked goal spent the turn budget: the repair gate is still decided and recorded, but no repair turn runs.
  if (s.evaluated === "blocked") return (s.repair.decided ? null : repair(false)) ?? stopped;
  if (s.evaluated === "continuing")
    return { kind: "queue_continuation", turn: s.turn, text: continuationPrompt(s.unmet) };
  return null;
}
