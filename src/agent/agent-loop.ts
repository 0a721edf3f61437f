import { boundText } from "../core/bounded.js";
import type { LoopgateEvent, Origin } from "../core/events.js";
import { continuationPrompt, describePredicate, evaluateGoal } from "../core/goal-gate.js";
import type { AgentEventBody } from "../core/run-decider.js";
import type { GoalPredicate } from "../core/task.js";
import { agentUsage, attemptEvents, foldAgent } from "./agent-state.js";
import type { ModelAdapter } from "./model.js";
import { repairTurn } from "./self-check/repair-turn.js";
import type { SelfCheckHook } from "./self-check/self-check.js";
import { runStepWork, type StepCheckPolicy } from "./todo/step-work.js";
import { todoWrittenFor } from "./todo/todo-tool.js";
import { executeToolCall, isMutating, toolSpecs } from "./tools/registry.js";
import type { AgentTool, ToolContext } from "./tools/tool.js";

/** The hard caps of the built-in agent; every one is enforced here and recorded when it applies. */
export interface AgentBudget {
  turns: number;
  stepsPerTurn: number;
  tokens?: number;
  costUsd?: number;
  wallMs?: number;
  modelRetries: number;
}

/** Everything one attempt of the agent needs; effects are injected so tests and resume drive the same loop. */
export interface AgentDeps {
  attempt: number;
  /** The attempt's opening message: the task prompt and, after a failed attempt, the required fix. */
  prompt: string;
  system: string;
  model: ModelAdapter;
  tools: readonly AgentTool[];
  toolCtx: ToolContext;
  goal: { condition: string | null; predicates: readonly GoalPredicate[] } | null;
  budget: AgentBudget;
  /** Appends an event to the run's log (before anything acts on it). */
  record(event: AgentEventBody, origin: Origin): Promise<void>;
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

/** How the attempt's agent phase ended. */
export type AgentOutcome =
  | { kind: "stopped"; text: string }
  | { kind: "capped" }
  | { kind: "model_failed"; reason: string }
  | { kind: "interrupted" };

/** Runs (or, after a crash, continues) the turn loop of one attempt until the goal gate lets it stop. */
export async function runAgentAttempt(d: AgentDeps): Promise<AgentOutcome> {
  const allTools = d.selfCheck ? [...d.tools, ...d.selfCheck.tools] : d.tools;
  const specs = toolSpecs(allTools);
  const rec = (event: AgentEventBody, origin: Origin = "runtime") => d.record(event, origin);
  const attempt = d.attempt;
  let retries = 0;
  const aborted = () => d.signal?.aborted === true;
  for (;;) {
    if (aborted()) return { kind: "interrupted" };
    const events = attemptEvents(d.events(), attempt);
    const s = foldAgent(events, d.prompt);
    if (s.capped) return { kind: "capped" };
    if (d.goal && s.goalSetAt === null) {
      await rec(
        {
          type: "goal_set",
          data: {
            attempt,
            condition: d.goal.condition,
            predicates: d.goal.predicates.map((p) => ({ ...p })),
            max_turns: d.budget.turns,
          },
        },
        "operator",
      );
      continue;
    }
    // 1. Tool calls the model asked for, one at a time: intent, execution, result.
    const call = s.pending[0];
    if (call) {
      const mutating = isMutating(allTools, call.name);
      // A read-only call left in doubt by a crash is repeated under its recorded intent (resume rolled
      // back and abandoned the mutating ones), so its intent is not written twice.
      if (!s.inDoubt.some((c) => c.callId === call.id))
        await rec({
          type: "tool_call_started",
          data: {
            attempt,
            turn: s.turn,
            call_id: call.id,
            name: call.name,
            args: call.args ?? null,
            mutating,
          },
        });
      const u = agentUsage(d.events());
      d.onStep?.({
        turn: s.turn,
        step: s.stepsInTurn,
        tool: call.name,
        tokens: u.tokens,
        costUsd: u.costUsd,
      });
      const sc = d.selfCheck?.handles(call.name) ? await d.selfCheck.submit(call, d.events()) : null;
      const r = sc ? sc.result : await executeToolCall(d.tools, call, d.toolCtx);
      // A call the interrupt killed has no result of its own: it stays in doubt for a resume.
      if (aborted()) return { kind: "interrupted" };
      await rec({
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
      });
      if (sc?.event) await rec(sc.event);
      const written = todoWrittenFor(d.events(), attempt, call, r.valid && !r.isError);
      if (written) await rec(written);
      if (mutating && r.valid) {
        const changed = await d.observeAfter(call.id);
        if (changed)
          await rec({
            type: "workspace_touched",
            data: { attempt, call_id: call.id, observation_id: changed },
          });
      }
      continue;
    }
    // 1b. The batch is done: declared checks of steps completed in it run, then each completion is appraised.
    if (
      await runStepWork({
        attempt,
        events: d.events,
        checks: d.stepChecks ?? { enabled: true, max: 16 },
        toolCtx: d.toolCtx,
        record: rec,
        observeAfter: d.observeAfter,
        ...(d.signal ? { signal: d.signal } : {}),
        ...(d.stepEscalation ? { escalation: d.stepEscalation } : {}),
      })
    )
      continue;
    // 2. The model stopped calling tools: the turn ends, and the goal gate decides whether it may stop.
    if (s.awaitingEvaluation) {
      if (!d.goal) {
        if (await repairTurn(d, attempt, s.turn, rec)) continue;
        return { kind: "stopped", text: s.lastText };
      }
      for (const p of d.goal.predicates) {
        if ("command_succeeded" in p) continue;
        const r = await d.probe(p);
        if (aborted()) return { kind: "interrupted" };
        await rec(
          {
            type: "goal_probed",
            data: {
              attempt,
              turn: s.turn,
              predicate: { ...p },
              holds: r.holds,
              detail: boundText(r.detail, 2000),
            },
          },
          "gate" in p ? "gate" : "runtime",
        );
      }
      const window = attemptEvents(d.events(), attempt).slice((s.goalSetAt ?? -1) + 1);
      const ev = evaluateGoal(d.goal.predicates, window, s.turn, d.budget.turns);
      await rec({
        type: "goal_evaluated",
        data: { attempt, turn: s.turn, outcome: ev.outcome, unmet: ev.unmet, reason: ev.reason },
      });
      continue;
    }
    if (s.evaluated === "completed" && (await repairTurn(d, attempt, s.turn, rec))) continue;
    // A blocked goal spent the turn budget: the gate is still decided and recorded, but no repair turn runs.
    if (s.evaluated === "blocked") await repairTurn(d, attempt, s.turn, rec, { turnsLeft: false });
    if (s.evaluated === "completed" || s.evaluated === "blocked")
      return { kind: "stopped", text: s.lastText };
    if (s.evaluated === "continuing") {
      const unmet =
        (events.findLast((e) => e.type === "goal_evaluated")?.data as { unmet?: string[] } | undefined)
          ?.unmet ?? [];
      await rec(
        { type: "continuation_queued", data: { attempt, turn: s.turn, text: continuationPrompt(unmet) } },
        "continuation",
      );
      continue;
    }
    // 3. Budgets, checked before every model request.
    const usage = agentUsage(d.events());
    const cap = overBudget(d, s.stepsInTurn, usage);
    if (cap) {
      await rec({ type: "budget_exhausted", data: { attempt, ...cap } });
      return { kind: "capped" };
    }
    d.onStep?.({ turn: s.turn, step: s.stepsInTurn + 1, tokens: usage.tokens, costUsd: usage.costUsd });
    const response = await d.model.generate({
      system: d.system,
      messages: s.messages,
      tools: specs,
      ...(d.signal ? { signal: d.signal } : {}),
    });
    if (aborted()) return { kind: "interrupted" };
    if (!response.ok) {
      const e = response.error;
      const canRetry = e.retryable && retries < d.budget.modelRetries;
      const backoff = canRetry ? Math.min(30_000, e.retryAfterMs ?? 500 * 2 ** retries) : null;
      await rec({
        type: "model_failed",
        data: {
          attempt,
          turn: s.turn,
          step: s.stepsInTurn + 1,
          kind: e.kind,
          message: boundText(e.message, 4000),
          retryable: e.retryable,
          retry: retries,
          backoff_ms: backoff,
        },
      });
      if (backoff === null) {
        const why = e.retryable ? `after ${retries} retries` : "(not retryable)";
        return { kind: "model_failed", reason: `model ${d.model.id} failed: ${e.kind}: ${e.message} ${why}` };
      }
      retries++;
      await d.sleep(backoff);
      continue;
    }
    retries = 0;
    await rec(
      {
        type: "model_responded",
        data: {
          attempt,
          turn: s.turn,
          step: s.stepsInTurn + 1,
          text: boundText(response.text, 100_000),
          tool_calls: response.toolCalls.map((c) => ({ id: c.id, name: c.name, args: c.args ?? null })),
          input_tokens: response.usage.inputTokens,
          output_tokens: response.usage.outputTokens,
          cost_usd: response.usage.costUsd,
          finish_reason: response.finishReason,
        },
      },
      "model",
    );
  }
}

function overBudget(
  d: AgentDeps,
  stepsInTurn: number,
  usage: { tokens: number; costUsd: number },
): { cap: "steps_per_turn" | "tokens" | "cost_usd" | "wall_time"; limit: number; used: number } | null {
  const b = d.budget;
  if (stepsInTurn >= b.stepsPerTurn)
    return { cap: "steps_per_turn", limit: b.stepsPerTurn, used: stepsInTurn };
  if (b.tokens !== undefined && usage.tokens >= b.tokens)
    return { cap: "tokens", limit: b.tokens, used: usage.tokens };
  if (b.costUsd !== undefined && usage.costUsd >= b.costUsd)
    return { cap: "cost_usd", limit: b.costUsd, used: Math.round(usage.costUsd * 1e6) / 1e6 };
  const elapsed = d.now() - d.runStartedAt;
  if (b.wallMs !== undefined && elapsed >= b.wallMs)
    return { cap: "wall_time", limit: b.wallMs, used: elapsed };
  return null;
}

/** The predicates in words, for the system prompt. */
export function describeGoal(goal: AgentDeps["goal"]): string {
  if (!goal) return "";
  const lines = goal.predicates.map((p) => `- ${describePredicate(p as Record<string, string>)}`);
  return [goal.condition ? `Goal: ${goal.condition}` : "Goal:", ...lines].join("\n");
}
