import type { ScheduleView } from "./backoff-history.js";
import {
  type BackoffPolicy,
  backoffWake,
  DEFAULT_BACKOFF,
  laterOf as later,
  maxBackoffStep,
  plusSeconds as plus,
  type WakeUp,
} from "./scheduler.js";

/**
 * What a scheduling host does after a tick (the scheduler decides when to look again, never
 * whether work may run). Pure: the host (`goal run`, `loopgate scheduler`, a worker) carries it out.
 */

/** The outcome of one tick as the scheduler reads it (the runner's TickOutcome is one of these). */
export type ScheduledOutcome =
  | { kind: "advanced"; changed: boolean; result: string; wake: WakeUp }
  | { kind: "idle"; reason: string; wake: WakeUp }
  | { kind: "waiting_person"; who: string; gateId: string; wake: WakeUp }
  | { kind: "throttled"; reason: string; wake: WakeUp }
  | { kind: "terminal"; closure: string; wake: WakeUp }
  | { kind: "stopped"; reason: string; wake: WakeUp }
  | { kind: "busy"; holder: string; expiresAt: string; wake: WakeUp }
  | { kind: "failed"; code: string; detail: string; wake: WakeUp };

/**
 * Failures a later turn retries by itself, with backoff: the run was not a SUCCESS (no receipt, so
 * nothing was written back), the base moved. Anything else needs a repair first.
 */
export const RETRIED_FAILURES: readonly string[] = ["run_failed", "receipt_missing", "needs_rebase"];

const NOT_RUNNABLE = new Set(["paused", "blocked_health"]);

/**
 * The wake-up a host applies: the tick's, held back by the backoff of the recorded turns when the
 * contract's identity is the one that backed off. It only ever delays: a wake-up that was not `run_now`
 * never becomes one, and a paused or blocked goal is never woken to run.
 */
export function effectiveWake(
  wake: WakeUp,
  sv: ScheduleView,
  now: Date,
  policy: BackoffPolicy = DEFAULT_BACKOFF,
): WakeUp {
  const state = sv.view.runtimeState;
  if (NOT_RUNNABLE.has(state) && (wake.action === "run_now" || wake.action === "wait_until"))
    return state === "paused"
      ? { action: "stop", at: null, why: "the goal is stopped; an explicit resume is needed" }
      : { action: "repair_health", at: null, why: "health must be repaired before anything runs" };
  if (wake.action !== "run_now" && wake.action !== "wait_until") return wake;
  if (state !== "eligible" && state !== "focus_wait") return wake;
  const b = sv.backoff;
  if (!b || b.identity !== sv.identity) return wake;
  const backoff = backoffWake(b.step, now, policy);
  if (backoff === null || backoff.at === null) return wake;
  const at = wake.at ? later(wake.at, backoff.at) : backoff.at;
  return Date.parse(at) <= now.getTime() ? wake : { ...backoff, at };
}

/** True when the backoff of the recorded turns is at its bound for the current contract. */
export function backoffAtBound(sv: ScheduleView, policy: BackoffPolicy = DEFAULT_BACKOFF): boolean {
  return (
    sv.backoff !== null && sv.backoff.identity === sv.identity && sv.backoff.step >= maxBackoffStep(policy)
  );
}

/** How `goal run` goes on: tick until terminal, stopped, waiting on a person or throttled. */
export type RunMode = "run" | "once" | "until_idle";

export type ScheduleStep =
  | { kind: "tick"; why: string }
  | { kind: "sleep"; until: string; why: string }
  | {
      kind: "exit";
      code: 0 | 1 | 2;
      /** One word for scripts: terminal, advanced, waiting_person, throttled, stopped, idle, busy, failed. */
      stop: string;
      why: string;
      who?: string;
    };

/** Who must act, and on what: a gate to decide, or (no gate) an action only a person can take. */
const personWhy = (o: { who: string; gateId: string }) =>
  o.gateId ? `${o.who} must decide ${o.gateId}` : `${o.who} must act`;

const exit = (code: 0 | 1 | 2, stop: string, why: string, who?: string): ScheduleStep =>
  who === undefined ? { kind: "exit", code, stop, why } : { kind: "exit", code, stop, why, who };

/**
 * `goal run`'s next step after a tick: exit 0 terminal, 1 waiting (a person, a state change, a throttle
 * window, a busy lease under --once), 2 failure (a settlement failure, blocked health, a turn that keeps
 * failing with the backoff at its bound); else tick now or sleep until the wake-up. `--once` stops after
 * the tick (0 when it advanced); `--until-idle` stops instead of sleeping.
 */
export function scheduleStep(
  o: ScheduledOutcome,
  wake: WakeUp,
  ctx: { now: Date; mode: RunMode; atBound: boolean; policy?: BackoffPolicy },
): ScheduleStep {
  switch (o.kind) {
    case "terminal":
      return exit(0, "terminal", `terminal closure: ${o.closure}`);
    case "waiting_person":
      return exit(1, "waiting_person", personWhy(o), o.who);
    case "throttled":
      return exit(1, "throttled", `${o.reason}${wake.at ? `; the window reopens at ${wake.at}` : ""}`);
    case "stopped":
      return wake.action === "repair_health" || o.wake.action === "repair_health"
        ? exit(2, "blocked_health", `blocked_health: ${o.reason}`)
        : exit(1, "stopped", o.reason);
    case "busy":
      if (ctx.mode !== "run")
        return exit(1, "busy", `a turn is in progress by ${o.holder} (lease until ${o.expiresAt})`);
      return {
        kind: "sleep",
        until: later(o.expiresAt, wake.at ?? o.expiresAt),
        why: `a turn is in progress by ${o.holder}; its lease ends at ${o.expiresAt}`,
      };
    case "failed":
      if (!RETRIED_FAILURES.includes(o.code)) return exit(2, "failed", `${o.code}: ${o.detail}`);
      if (ctx.atBound)
        return exit(
          2,
          "failed",
          `${o.code}: ${o.detail}; it keeps failing on the same contract (backoff at its bound)`,
        );
      if (ctx.mode === "once") return exit(2, "failed", `${o.code}: ${o.detail}`);
      return follow(wake, ctx, "failed");
    case "advanced":
      if (ctx.mode === "once") return exit(0, "advanced", `${o.result}; next: ${wake.why}`);
      return follow(wake, ctx, "idle");
    case "idle": {
      if (ctx.mode === "once") return exit(1, "idle", `${o.reason}; next: ${wake.why}`);
      // An idle tick that says "run now" would spin: look again after the first backoff step.
      const w =
        wake.action === "run_now"
          ? {
              ...wake,
              action: "wait_until" as const,
              at: plus(ctx.now, (ctx.policy ?? DEFAULT_BACKOFF).baseSeconds),
            }
          : wake;
      return follow(w, ctx, "idle", o.reason);
    }
  }
}

function follow(
  wake: WakeUp,
  ctx: { now: Date; mode: RunMode },
  stop: string,
  reason?: string,
): ScheduleStep {
  const why = reason ? `${reason}; ${wake.why}` : wake.why;
  switch (wake.action) {
    case "run_now":
      return { kind: "tick", why: wake.why };
    case "wait_until":
      if (wake.at === null || Date.parse(wake.at) <= ctx.now.getTime()) return { kind: "tick", why };
      if (ctx.mode === "until_idle") return exit(1, stop, `${why} (next at ${wake.at})`);
      return { kind: "sleep", until: wake.at, why };
    case "ask_user":
      return exit(1, "waiting_person", why);
    case "repair_health":
      return exit(2, "blocked_health", why);
    case "stop":
      // A turn that closed the goal: done (0), never "stopped" with a resume to suggest.
      return wake.terminal ? exit(0, "terminal", wake.why) : exit(1, "stopped", why);
    case "wait_state_change":
      return exit(1, "idle", `${why}: nothing changes by itself`);
  }
}

/**
 * When a long-lived host (`loopgate scheduler`, a worker re-enqueueing a goal turn) looks at a goal
 * again after a tick: a time, or null to drop it (terminal, stopped, waiting on a person or on a state
 * change: a person's write is what wakes it, and `recheck` says how often a scheduler looks for one).
 */
export function hostWake(
  o: ScheduledOutcome,
  wake: WakeUp,
  ctx: { now: Date; recheckSeconds: number | null },
): { at: string | null; why: string } {
  const now = ctx.now.toISOString();
  const recheck = (why: string) =>
    ctx.recheckSeconds === null
      ? { at: null, why }
      : { at: plus(ctx.now, ctx.recheckSeconds), why: `${why}; looking again in ${ctx.recheckSeconds}s` };
  if (o.kind === "terminal") return { at: null, why: `terminal closure: ${o.closure}` };
  if (o.kind === "busy") return { at: later(o.expiresAt, now), why: `a turn is in progress by ${o.holder}` };
  if (o.kind === "failed" && !RETRIED_FAILURES.includes(o.code)) return recheck(`${o.code}: ${o.detail}`);
  if (o.kind === "waiting_person") return recheck(personWhy(o));
  if (o.kind === "stopped") return recheck(o.reason);
  switch (wake.action) {
    case "run_now":
      return o.kind === "idle" ? recheck(`${o.reason}; ${wake.why}`) : { at: now, why: wake.why };
    case "wait_until":
      return { at: wake.at === null ? now : later(wake.at, now), why: wake.why };
    default:
      return recheck(wake.why);
  }
}
