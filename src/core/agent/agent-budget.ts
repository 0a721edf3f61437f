import type { EventData } from "../events/loopgate-event.js";

/** A cap that applied: what `budget_exhausted` records. */
export type BudgetCap = Omit<EventData<"budget_exhausted">, "attempt">;

/** Why the agent must stop now: the user interrupted it, or a cap applies before the next model request. */
export type StopReason = { kind: "interrupted" } | { kind: "cap"; cap: BudgetCap };

/** What a stop rule reads: the agent's position and usage, and the clock (passed in). */
export interface BudgetView {
  stepsInTurn: number;
  usage: { tokens: number; costUsd: number };
  now: number;
}

/** One stop rule (Vercel AI SDK's `stopWhen`): a reason to stop, or null. Compose them in a list; the first wins. */
export type StopCondition = (view: BudgetView) => StopReason | null;

const cap = (c: BudgetCap["cap"], limit: number, used: number): StopReason => ({
  kind: "cap",
  cap: { cap: c, limit, used },
});

/** The model has made `n` requests in this turn. */
export const stepsPerTurnIs =
  (n: number): StopCondition =>
  (v) =>
    v.stepsInTurn >= n ? cap("steps_per_turn", n, v.stepsInTurn) : null;

/** The run's responses used at least `n` tokens (input + output). */
export const tokensAtLeast =
  (n: number): StopCondition =>
  (v) =>
    v.usage.tokens >= n ? cap("tokens", n, v.usage.tokens) : null;

/** The run's responses cost at least `usd` (the recorded figure is rounded to a millionth). */
export const costAtLeast =
  (usd: number): StopCondition =>
  (v) =>
    v.usage.costUsd >= usd ? cap("cost_usd", usd, Math.round(v.usage.costUsd * 1e6) / 1e6) : null;

/** At least `ms` have passed since `since` (the run's start). */
export const wallTimeAtLeast =
  (ms: number, since: number): StopCondition =>
  (v) =>
    v.now - since >= ms ? cap("wall_time", ms, v.now - since) : null;

/** The user interrupted (Ctrl-C or a cancel): nothing more starts. */
export const aborted =
  (signal: { readonly aborted: boolean } | undefined): StopCondition =>
  () =>
    signal?.aborted === true ? { kind: "interrupted" } : null;

/** The first reason any rule gives, in list order; null when none applies. */
export function firstStop(rules: readonly StopCondition[], view: BudgetView): StopReason | null {
  for (const rule of rules) {
    const r = rule(view);
    if (r) return r;
  }
  return null;
}

/** The built-in agent's hard caps as the task and the command line set them. */
export interface AgentBudget {
  turns: number;
  stepsPerTurn: number;
  tokens?: number;
  costUsd?: number;
  wallMs?: number;
  modelRetries: number;
}

/** The stop rules of a budget, in the order they are checked before each model request. */
export function budgetStops(
  b: AgentBudget,
  runStartedAt: number,
  signal?: { readonly aborted: boolean },
): StopCondition[] {
  return [
    aborted(signal),
    stepsPerTurnIs(b.stepsPerTurn),
    ...(b.tokens !== undefined ? [tokensAtLeast(b.tokens)] : []),
    ...(b.costUsd !== undefined ? [costAtLeast(b.costUsd)] : []),
    ...(b.wallMs !== undefined ? [wallTimeAtLeast(b.wallMs, runStartedAt)] : []),
  ];
}

/** The backoff before retrying a failed model request, or null when it is not retried (not retryable, or retries spent). */
export function retryBackoff(
  failure: { retryable: boolean; retryAfterMs?: number },
  retries: number,
  maxRetries: number,
): number | null {
  if (!failure.retryable || retries >= maxRetries) return null;
  return Math.min(30_000, failure.retryAfterMs ?? 500 * 2 ** retries);
}
