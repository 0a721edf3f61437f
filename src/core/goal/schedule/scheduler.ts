import type { InteractionContract } from "../contract.js";
import type { RuntimeState } from "../runtime-state.js";

/**
 * The scheduler hint and backoff: when to look again, never whether work may run.
 * Pure: it reads the contract and now, spends nothing, and never turns a paused or blocked goal
 * into a runnable one.
 */
export interface ContractView {
  runtime_state: RuntimeState;
  selected_todo: string | null;
  gate_ids: readonly string[];
  /** The contract's own hint time (a throttle window's reopening, a resume_when time). */
  not_before: string | null;
  terminal: boolean;
}

/** The view of goal-core's interaction contract the scheduler reads. */
export function contractView(c: InteractionContract): ContractView {
  return {
    runtime_state: c.runtime_state,
    selected_todo: c.agent_channel.selected_todo,
    gate_ids: c.user_channel.gates.map((g) => g.gate_id),
    not_before: c.scheduler_hint.not_before,
    terminal: c.terminal,
  };
}

/** The identity backoff is keyed by: selected todo, runtime state, gate set. */
export function contractIdentity(c: ContractView): string {
  return JSON.stringify([c.selected_todo, c.runtime_state, [...c.gate_ids].sort()]);
}

export interface BackoffPolicy {
  base_seconds: number;
  factor: number;
  max_seconds: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { base_seconds: 30, factor: 2, max_seconds: 3600 };

export interface BackoffState {
  identity: string;
  reset_token: string | null;
  step: number;
}

/** After a turn: grow only when the identity and reset token are unchanged and the turn changed nothing. */
export function nextBackoff(
  prev: BackoffState | null,
  turn: { identity: string; changed: boolean; reset_token: string | null },
  policy: BackoffPolicy = DEFAULT_BACKOFF,
): BackoffState {
  const same = prev !== null && prev.identity === turn.identity && prev.reset_token === turn.reset_token;
  if (!same || turn.changed) return { identity: turn.identity, reset_token: turn.reset_token, step: 0 };
  const cap = maxBackoffStep(policy);
  return { ...prev, step: Math.min(prev.step + 1, cap) };
}

/** The step at which the wait reaches its bound (backoff grows no further). */
export function maxBackoffStep(p: BackoffPolicy = DEFAULT_BACKOFF): number {
  let step = 1;
  while (delaySeconds(step, p) < p.max_seconds && step < 64) step++;
  return step;
}

/** The wait of a backoff step: 0 at step 0, then base·factor^(step-1), bounded by max. */
export function delaySeconds(step: number, p: BackoffPolicy = DEFAULT_BACKOFF): number {
  if (step <= 0) return 0;
  return Math.min(p.max_seconds, p.base_seconds * p.factor ** (step - 1));
}

export type WakeAction =
  | "run_now"
  | "wait_until"
  | "wait_state_change"
  | "ask_user"
  | "repair_health"
  | "stop";

export interface WakeUp {
  action: WakeAction;
  /** When to look again; null: only on a state change (a person, a repair, a resume). */
  at: string | null;
  why: string;
  /** Set with `stop` when the goal's closure holds: it is done, not paused (nothing to resume). */
  terminal?: true;
}

/** `now` plus `seconds`, as an ISO time. */
export const plusSeconds = (now: string, seconds: number) =>
  new Date(Date.parse(now) + seconds * 1000).toISOString();
/** The later of two ISO times. */
export const laterOf = (a: string, b: string) => (Date.parse(a) >= Date.parse(b) ? a : b);
const earliest = (xs: readonly (string | null)[]) =>
  xs.filter((x): x is string => x !== null).sort((a, b) => Date.parse(a) - Date.parse(b))[0] ?? null;

/** The next wake-up from the contract, the monitors' next_due_at, now and the backoff. */
export function nextWakeUp(
  c: ContractView,
  input: {
    now: string;
    monitor_due: readonly string[];
    backoff: BackoffState | null;
    policy?: BackoffPolicy;
  },
): WakeUp {
  const policy = input.policy ?? DEFAULT_BACKOFF;
  const now = input.now;
  if (c.terminal)
    return { action: "stop", at: null, why: "terminal closure holds (no_followup)", terminal: true };
  switch (c.runtime_state) {
    case "paused":
      return { action: "stop", at: null, why: "the goal is stopped; an explicit resume is needed" };
    case "blocked_health":
      return { action: "repair_health", at: null, why: "health must be repaired before anything runs" };
    case "operator_gate":
      return { action: "ask_user", at: null, why: "a person must decide a gate" };
    case "throttled":
      return {
        action: "wait_until",
        at: c.not_before,
        why: "the quota window is spent; wait for it to reopen",
      };
    case "eligible":
    case "focus_wait": {
      const step = input.backoff?.identity === contractIdentity(c) ? input.backoff.step : 0;
      return backoffWake(step, now, policy) ?? { action: "run_now", at: now, why: "work is selected" };
    }
    case "waiting": {
      const future = input.monitor_due.filter((t) => Date.parse(t) > Date.parse(now));
      const due = input.monitor_due.some((t) => Date.parse(t) <= Date.parse(now));
      if (due) return { action: "run_now", at: now, why: "a monitor is due" };
      const at = earliest([c.not_before, ...future]);
      return at
        ? { action: "wait_until", at, why: "waiting for the next monitor poll or resume condition" }
        : { action: "wait_state_change", at: null, why: "waiting for any state change" };
    }
  }
}

/**
 * The wait a backoff step imposes from `now` (null at step 0: no wait). The one wording and arithmetic
 * of a backoff, whether the contract's wake-up (nextWakeUp) or a host's (effectiveWake) applies it.
 */
export function backoffWake(
  step: number,
  now: string,
  policy: BackoffPolicy = DEFAULT_BACKOFF,
): WakeUp | null {
  const d = delaySeconds(step, policy);
  if (d === 0) return null;
  return {
    action: "wait_until",
    at: plusSeconds(now, d),
    why: `no change for ${step} turn(s) on the same contract; backoff ${d}s`,
  };
}
