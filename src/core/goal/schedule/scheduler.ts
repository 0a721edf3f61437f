import { type BackoffPolicy, backoffDelaySeconds } from "../../kernel/backoff.js";
import type { InteractionContract } from "../contract.js";
import type { RuntimeState } from "../runtime-state.js";

/**
 * The scheduler hint and backoff: when to look again, never whether work may run.
 * Pure: it reads the contract and now, spends nothing, and never turns a paused or blocked goal
 * into a runnable one.
 */
export interface ContractView {
  runtimeState: RuntimeState;
  selectedTodo: string | null;
  gateIds: readonly string[];
  /** The contract's own hint time (a throttle window's reopening, a resume_when time). */
  notBefore: string | null;
  terminal: boolean;
}

/** The view of goal-core's interaction contract the scheduler reads. */
export function contractView(c: InteractionContract): ContractView {
  return {
    runtimeState: c.runtimeState,
    selectedTodo: c.agentChannel.selectedTodo,
    gateIds: c.userChannel.gates.map((g) => g.gateId),
    notBefore: c.schedulerHint.notBefore,
    terminal: c.terminal,
  };
}

/** The identity backoff is keyed by: selected todo, runtime state, gate set. */
export function contractIdentity(c: ContractView): string {
  return JSON.stringify([c.selectedTodo, c.runtimeState, [...c.gateIds].sort()]);
}

export type { BackoffPolicy } from "../../kernel/backoff.js";

export const DEFAULT_BACKOFF: BackoffPolicy = { baseSeconds: 30, factor: 2, maxSeconds: 3600 };

export interface BackoffState {
  identity: string;
  resetToken: string | null;
  step: number;
}

/** After a turn: grow only when the identity and reset token are unchanged and the turn changed nothing. */
export function nextBackoff(
  prev: BackoffState | null,
  turn: { identity: string; changed: boolean; resetToken: string | null },
  policy: BackoffPolicy = DEFAULT_BACKOFF,
): BackoffState {
  const same = prev !== null && prev.identity === turn.identity && prev.resetToken === turn.resetToken;
  if (!same || turn.changed) return { identity: turn.identity, resetToken: turn.resetToken, step: 0 };
  const cap = maxBackoffStep(policy);
  return { ...prev, step: Math.min(prev.step + 1, cap) };
}

/** The step at which the wait reaches its bound (backoff grows no further). */
export function maxBackoffStep(p: BackoffPolicy = DEFAULT_BACKOFF): number {
  let step = 1;
  while (delaySeconds(step, p) < p.maxSeconds && step < 64) step++;
  return step;
}

/** The wait of a backoff step: 0 at step 0, then base·factor^(step-1), bounded by max. */
export function delaySeconds(step: number, p: BackoffPolicy = DEFAULT_BACKOFF): number {
  return backoffDelaySeconds(step, p);
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
export const plusSeconds = (now: Date, seconds: number) =>
  new Date(now.getTime() + seconds * 1000).toISOString();
/** The later of two ISO times. */
export const laterOf = (a: string, b: string) => (Date.parse(a) >= Date.parse(b) ? a : b);
const earliest = (xs: readonly (string | null)[]) =>
  xs.filter((x): x is string => x !== null).sort((a, b) => Date.parse(a) - Date.parse(b))[0] ?? null;

/** The next wake-up from the contract, the monitors' next_due_at, now and the backoff. */
export function nextWakeUp(
  c: ContractView,
  input: {
    now: Date;
    monitorDue: readonly string[];
    backoff: BackoffState | null;
    policy?: BackoffPolicy;
  },
): WakeUp {
  const policy = input.policy ?? DEFAULT_BACKOFF;
  const now = input.now;
  if (c.terminal)
    return { action: "stop", at: null, why: "terminal closure holds (no_followup)", terminal: true };
  switch (c.runtimeState) {
    case "paused":
      return { action: "stop", at: null, why: "the goal is stopped; an explicit resume is needed" };
    case "blocked_health":
      return { action: "repair_health", at: null, why: "health must be repaired before anything runs" };
    case "operator_gate":
      // A gate to decide, or (no gate) a step only a person takes: a user action, a reopen.
      return {
        action: "ask_user",
        at: null,
        why: c.gateIds.length ? "a person must decide a gate" : "a person must act (goal next says what)",
      };
    case "throttled":
      return {
        action: "wait_until",
        at: c.notBefore,
        why: "the quota window is spent; wait for it to reopen",
      };
    case "eligible":
    case "focus_wait": {
      const step = input.backoff?.identity === contractIdentity(c) ? input.backoff.step : 0;
      return (
        backoffWake(step, now, policy) ?? {
          action: "run_now",
          at: now.toISOString(),
          why: "work is selected",
        }
      );
    }
    case "waiting": {
      const future = input.monitorDue.filter((t) => Date.parse(t) > now.getTime());
      const due = input.monitorDue.some((t) => Date.parse(t) <= now.getTime());
      if (due) return { action: "run_now", at: now.toISOString(), why: "a monitor is due" };
      const at = earliest([c.notBefore, ...future]);
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
export function backoffWake(step: number, now: Date, policy: BackoffPolicy = DEFAULT_BACKOFF): WakeUp | null {
  const d = delaySeconds(step, policy);
  if (d === 0) return null;
  return {
    action: "wait_until",
    at: plusSeconds(now, d),
    why: `no change for ${step} turn(s) on the same contract; backoff ${d}s`,
  };
}
