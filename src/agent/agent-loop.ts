import type { AgentBudget } from "../core/agent/agent-budget.js";
import { budgetStops, retryBackoff } from "../core/agent/agent-budget.js";
import { type AgentOutcome, type AgentState, evolveAgent, foldAgent } from "../core/agent/agent-decider.js";
import { projectMessages } from "../core/agent/agent-messages.js";
import { type AgentAction, nextAgentAction } from "../core/agent/agent-next.js";
import { describePredicate, evaluateGoal } from "../core/agent/stop-condition.js";
import { type LoopgateEvent, type Origin, runStreamOf } from "../core/events/loopgate-event.js";
import { boundText } from "../core/kernel/bounded.js";
import { InfrastructureError } from "../core/kernel/errors.js";
import type { AgentEventBody } from "../core/run/run-decider.js";
import type { GoalPredicate } from "../core/task/task.js";
import type { ModelAdapter, ToolCall } from "./models/model.js";
import type { SelfCheckHook } from "./self-check/self-check.js";
import { appraisal, escalation, runStepCheck, type StepCheckPolicy } from "./todo/step-work.js";
import { ensureAgentSandbox } from "./tools/self-test.js";
import type { AgentTool, ToolContext } from "./tools/tool.js";
import { executeToolCall, isMutating, toolSpecs } from "./tools/tool-registry.js";

export type { AgentBudget } from "../core/agent/agent-budget.js";
export type { AgentOutcome } from "../core/agent/agent-decider.js";

/** Everything one attempt of the agent needs; effects are injected so tests and resume drive the same loop. */
export interface AgentDeps {
  attempt: number;
  /** The attempt's opening message: the task prompt and, after a failed attempt, the required fix. */
  prompt: string;
  system: string;
  model: ModelAdapter;
  /** The tools, each bound to what it needs; heavy mode's self-check tools come with `selfCheck`. */
  tools: readonly AgentTool[];
  toolCtx: ToolContext;
  goal: { condition: string | null; predicates: readonly GoalPredicate[] } | null;
  budget: AgentBudget;
  /** Appends an event (and `more`, in the same append) to the run's log, before anything acts on them. */
  record(event: AgentEventBody, origin: Origin, more?: readonly AgentEventBody[]): Promise<void>;
  /** Every event of the run so far, including those just recorded. */
  events(): readonly LoopgateEvent[];
  /** Observes the workspace after a mutating call; returns the new observation id if it changed. */
  observeAfter(callId: string): Promise<string | null>;
  /** loopgate's own check of a gate or file predicate at the end of a turn. */
  probe(p: GoalPredicate): Promise<{ holds: boolean; detail: string }>;
  runStartedAt: number;
  now(): number;
  /** Waits `ms` (a retry's backoff); resolves early when `signal` aborts. */
  sleep(ms: number): Promise<void>;
  /**
   * Ctrl-C or a cancel: reaches the model request, the backoff, every tool call and step check (through
   * `toolCtx.signal`, which must be the same signal). Whatever it cut short is not recorded as a result:
   * the attempt ends `interrupted`, and a resume treats the cut call as in doubt.
   */
  signal?: AbortSignal;
  onStep?(info: { turn: number; step: number; tool?: string; tokens: number; costUsd: number }): void;
  /** Declared plan-step checks: whether they execute and how many per run (default on, 16). */
  stepChecks?: StepCheckPolicy;
  /** Step escalation (`--step-escalation`): the quarantined model; absent, escalation is off. */
  stepEscalation?: ModelAdapter;
  /** Heavy mode (`self_check: required`): the self-check tools and the bounded repair gate. */
  selfCheck?: SelfCheckHook;
}

/**
 * Runs (or, after a crash, continues) the turn loop of one attempt until the goal gate lets it stop. The
 * decisions are core/agent/agent-next.ts `nextAgentAction`; this loop carries each out and records its facts,
 * evolving the state on every append (the log is folded once, at the start).
 */
export async function runAgentAttempt(d: AgentDeps): Promise<AgentOutcome> {
  const tools = d.selfCheck ? [...d.tools, ...d.selfCheck.tools] : d.tools;
  // Before anything relies on the sandbox (once per process and mode); a failure says what to install.
  try {
    await ensureAgentSandbox(d.toolCtx.sandbox);
  } catch (e) {
    if (e instanceof InfrastructureError) return { kind: "tool_failure", reason: e.message };
    throw e;
  }
  let state = foldAgent(
    {
      attempt: d.attempt,
      modelId: d.model.id,
      goal: d.goal ? { predicates: d.goal.predicates, maxTurns: d.budget.turns } : null,
      selfCheck: d.selfCheck !== undefined,
      escalation: d.stepEscalation !== undefined,
      stepChecks: d.stepChecks ?? { enabled: true, max: 16 },
      factTools: tools.filter((t) => t.facts && !t.mutating).map((t) => t.name),
    },
    d.events(),
  );
  const start = attemptStart(d.events(), d.attempt);
  const attemptLog = () => d.events().slice(start);
  const rec = async (event: AgentEventBody, origin: Origin = "runtime", more?: readonly AgentEventBody[]) => {
    const before = d.events().length;
    await d.record(event, origin, more);
    for (const e of runStreamOf(d.events().slice(before))) state = evolveAgent(state, e);
  };
  const limits = { stopWhen: budgetStops(d.budget, d.runStartedAt, d.signal) };
  const ctx: Ctx = { d, tools, rec, attemptLog, state: () => state };
  for (;;) {
    const action = nextAgentAction(state, limits, d.now());
    if (action.kind === "stop") return action.outcome;
    if (!(await carryOut(ctx, action))) return { kind: "interrupted" };
  }
}

interface Ctx {
  d: AgentDeps;
  tools: readonly AgentTool[];
  rec(event: AgentEventBody, origin?: Origin, more?: readonly AgentEventBody[]): Promise<void>;
  attemptLog(): readonly LoopgateEvent[];
  state(): AgentState;
}

/** Carries out one action and records its facts; false when an interrupt cut it short (nothing recorded for it). */
async function carryOut(c: Ctx, a: Exclude<AgentAction, { kind: "stop" }>): Promise<boolean> {
  const { d, rec } = c;
  const attempt = d.attempt;
  const aborted = () => d.signal?.aborted === true;
  switch (a.kind) {
    case "set_goal":
      await rec(
        {
          type: "goal_set",
          data: {
            attempt,
            condition: d.goal?.condition ?? null,
            predicates: (d.goal?.predicates ?? []).map((p) => ({ ...p })),
            max_turns: d.budget.turns,
          },
        },
        "operator",
      );
      return true;
    case "run_tool":
      return runTool(c, a.call, a.intentRecorded, a.mutating ?? isMutating(c.tools, a.call.name));
    case "replay_tool_facts": {
      const r = await executeToolCall(c.tools, a.call, d.toolCtx);
      if (aborted()) return false;
      for (const e of r.events) await rec(e);
      return true;
    }
    case "run_step_check": {
      const r = await runStepCheck({ attempt, ...a }, d.toolCtx, d.observeAfter);
      if (r.touched)
        await rec({
          type: "workspace_touched",
          data: { attempt, call_id: a.checkId, observation_id: r.touched },
        });
      if (aborted()) return false;
      await rec({ type: "step_check_ran", data: r.check });
      return true;
    }
    case "appraise_step":
      await rec(appraisal(d.events(), { attempt, ...a }));
      return true;
    case "escalate_step": {
      if (!d.stepEscalation) throw new Error("unreachable: escalation decided without a reviewer model");
      const e = await escalation(d.stepEscalation, { attempt, ...a }, d.signal);
      if (!e) return false;
      await rec(e);
      return true;
    }
    case "probe_goal": {
      const r = await d.probe(a.predicate);
      if (aborted()) return false;
      await rec(
        {
          type: "goal_probed",
          data: {
            attempt,
            turn: a.turn,
            predicate: { ...a.predicate },
            holds: r.holds,
            detail: boundText(r.detail, 2000),
          },
        },
        "gate_passed" in a.predicate ? "gate" : "runtime",
      );
      return true;
    }
    case "evaluate_goal": {
      const window = c.attemptLog().slice(a.windowStart);
      const ev = evaluateGoal(d.goal?.predicates ?? [], window, a.turn, a.maxTurns);
      await rec({
        type: "goal_evaluated",
        data: { attempt, turn: a.turn, outcome: ev.outcome, unmet: ev.unmet, reason: ev.reason },
      });
      return true;
    }
    case "decide_repair": {
      if (!d.selfCheck) throw new Error("unreachable: repair decided without the self-check");
      const decided = await d.selfCheck.gate(c.attemptLog(), a.turn);
      // With the turn budget spent, a repair turn would break that cap: the decision says so instead.
      if (!a.turnsLeft && decided.data.decision === "repair")
        decided.data = {
          ...decided.data,
          decision: "cap_reached",
          warnings: [...decided.data.warnings, "the turn budget is spent, so no repair turn can run"].slice(
            0,
            50,
          ),
        };
      await rec(decided);
      return true;
    }
    case "queue_continuation":
      await rec(
        { type: "continuation_queued", data: { attempt, turn: a.turn, text: a.text } },
        "continuation",
      );
      return true;
    case "record_cap":
      await rec({ type: "budget_exhausted", data: { attempt, ...a.cap } });
      return true;
    case "call_model":
      return callModel(c, a);
  }
}

/** One tool call: intent, execution, then its result with the tool's facts and what it did to the workspace. */
async function runTool(c: Ctx, call: ToolCall, intentRecorded: boolean, mutating: boolean): Promise<boolean> {
  const { d, rec } = c;
  const attempt = d.attempt;
  const s = c.state();
  // A read-only call left in doubt by a crash is repeated under its recorded intent (resume rolled back
  // and abandoned the mutating ones), so its intent is not written twice.
  if (!intentRecorded)
    await rec({
      type: "tool_call_started",
      data: { attempt, turn: s.turn, call_id: call.id, name: call.name, args: call.args ?? null, mutating },
    });
  d.onStep?.({
    turn: s.turn,
    step: s.stepsInTurn,
    tool: call.name,
    tokens: s.usage.tokens,
    costUsd: s.usage.costUsd,
  });
  const r = await executeToolCall(c.tools, call, d.toolCtx);
  // A call the interrupt killed has no result of its own: it stays in doubt for a resume.
  if (d.signal?.aborted) return false;
  // What a mutating call changed is observed (and kept) before its result is recorded, and the result
  // and the observation go into one append: no crash can record a result whose change the log does not
  // name, so a resume on another machine, which has only the store's observations, never loses it.
  const changed = mutating && r.valid ? await d.observeAfter(call.id) : null;
  await rec(
    {
      type: "tool_call_finished",
      data: {
        attempt,
        call_id: call.id,
        name: call.name,
        valid: r.valid,
        is_error: r.isError,
        exit_code: r.exitCode,
        subject: boundText(r.subject, 20_000),
        content: boundText(r.content, 40_000),
        duration_ms: r.durationMs,
      },
    },
    "runtime",
    changed
      ? [{ type: "workspace_touched", data: { attempt, call_id: call.id, observation_id: changed } }]
      : [],
  );
  const tool = c.tools.find((t) => t.name === call.name);
  if (tool?.facts && r.valid && !r.isError && r.events.length === 0)
    throw new Error(`tool ${tool.name} declares facts but its successful result carried none`);
  // A fact a crash cuts off here is replayed on resume (replay_tool_facts).
  for (const e of r.events) await rec(e);
  return true;
}

/** One model request; a failure is recorded with its retry decision (and the backoff waited). */
async function callModel(c: Ctx, a: Extract<AgentAction, { kind: "call_model" }>): Promise<boolean> {
  const { d, rec } = c;
  const attempt = d.attempt;
  const s = c.state();
  d.onStep?.({ turn: a.turn, step: a.step, tokens: s.usage.tokens, costUsd: s.usage.costUsd });
  const response = await d.model.generate({
    system: d.system,
    messages: projectMessages(c.attemptLog(), d.prompt),
    tools: toolSpecs(c.tools),
    ...(d.signal ? { signal: d.signal } : {}),
  });
  if (d.signal?.aborted) return false;
  if (!response.ok) {
    const e = response.error;
    const backoff = retryBackoff(e, a.retry, d.budget.modelRetries);
    await rec({
      type: "model_failed",
      data: {
        attempt,
        turn: a.turn,
        step: a.step,
        kind: e.kind,
        message: boundText(e.message, 4000),
        retryable: e.retryable,
        retry: a.retry,
        backoff_ms: backoff,
      },
    });
    if (backoff !== null) await d.sleep(backoff);
    return true;
  }
  await rec(
    {
      type: "model_responded",
      data: {
        attempt,
        turn: a.turn,
        step: a.step,
        text: boundText(response.text, 100_000),
        tool_calls: response.toolCalls.map((t) => ({ id: t.id, name: t.name, args: t.args ?? null })),
        input_tokens: response.usage.inputTokens,
        output_tokens: response.usage.outputTokens,
        cost_usd: response.usage.costUsd,
        finish_reason: response.finishReason,
      },
    },
    "model",
  );
  return true;
}

/** Index of the first event of attempt `n` in the run's log (after its attempt_started). */
function attemptStart(events: readonly LoopgateEvent[], n: number): number {
  let seen = 0;
  for (let i = 0; i < events.length; i++)
    if (events[i]?.type === "attempt_started" && ++seen === n) return i + 1;
  return events.length;
}

/** The predicates in words, for the system prompt. */
export function describeGoal(goal: AgentDeps["goal"]): string {
  if (!goal) return "";
  const lines = goal.predicates.map((p) => `- ${describePredicate(p as Record<string, string>)}`);
  return [goal.condition ? `Goal: ${goal.condition}` : "Goal:", ...lines].join("\n");
}
