import type { ScheduleView } from "./backoff-history.js";
import {
  backoffAtBound,
  effectiveWake,
  hostWake,
  type RunMode,
  type ScheduledOutcome,
  type ScheduleStep,
  scheduleStep,
} from "./schedule-step.js";
import { type BackoffPolicy, DEFAULT_BACKOFF, type WakeUp } from "./scheduler.js";

/**
 * The one "when to tick next" decision every host carries out after a tick: `goal run` (a loop in one
 * process), `loopgate scheduler` and a worker queueing a goal's next turn. Pure: the host reads the
 * schedule view and the clock, calls this, and does what it says.
 */

/**
 * How often a long-lived host (`loopgate scheduler`) looks again at a goal waiting on a person, stopped
 * or needing repair: a person's write is what changes it, and nothing notifies the scheduler of one.
 */
export const RECHECK_SECONDS = 60;

/**
 * Who carries the decision out. `loop`: `goal run` (and a worker's goal turn that settled none), which
 * exits when nothing changes by itself; `long_lived`: a host that keeps the goal and looks again after
 * `recheckSeconds` (null: drops it instead).
 */
export type WakeHost =
  | { kind: "loop"; mode: RunMode }
  | { kind: "long_lived"; recheckSeconds: number | null };

export interface NextWake {
  /** The tick's wake-up, held back by the backoff the recorded turns earned. */
  wake: WakeUp;
  /** What the host does: tick now, sleep until a time, or exit (a long-lived host: drop the goal). */
  step: ScheduleStep;
}

/** After a tick: the wake-up to apply and the host's next step. */
export function nextWake(
  outcome: ScheduledOutcome,
  sv: ScheduleView,
  ctx: { now: Date; host: WakeHost; policy?: BackoffPolicy },
): NextWake {
  const policy = ctx.policy ?? DEFAULT_BACKOFF;
  const wake = effectiveWake(outcome.wake, sv, ctx.now, policy);
  if (ctx.host.kind === "loop")
    return {
      wake,
      step: scheduleStep(outcome, wake, {
        now: ctx.now,
        mode: ctx.host.mode,
        atBound: backoffAtBound(sv, policy),
        policy,
      }),
    };
  const next = hostWake(outcome, wake, { now: ctx.now, recheckSeconds: ctx.host.recheckSeconds });
  return {
    wake,
    step:
      next.at === null
        ? { kind: "exit", code: 0, stop: outcome.kind, why: next.why }
        : { kind: "sleep", until: next.at, why: next.why },
  };
}

/**
 * Before a host's first tick: the backoff the recorded turns already earned (a restarted host honours
 * it). The time to wait until, or null to tick now.
 */
export function startWake(
  sv: ScheduleView,
  now: Date,
  policy: BackoffPolicy = DEFAULT_BACKOFF,
): { until: string; why: string } | null {
  const first = effectiveWake({ action: "run_now", at: now.toISOString(), why: "start" }, sv, now, policy);
  return first.action === "wait_until" && first.at && Date.parse(first.at) > now.getTime()
    ? { until: first.at, why: first.why }
    : null;
}
