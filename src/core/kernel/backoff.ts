/**
 * The one backoff arithmetic: a wait that starts at `baseSeconds` and grows by `factor` each step, bounded by
 * `maxSeconds`. Pure data and one function, shared by the goal scheduler's turn backoff
 * (`core/goal/schedule/scheduler.ts`), a continuous monitor's poll cadence (`core/goal/turn/monitor.ts`) and
 * a notification's retries (`core/goal/notify.ts`).
 */
export interface BackoffPolicy {
  baseSeconds: number;
  factor: number;
  maxSeconds: number;
}

/** The wait of a backoff step: 0 at step 0, then base·factor^(step-1), bounded by max. */
export function backoffDelaySeconds(step: number, p: BackoffPolicy): number {
  if (step <= 0) return 0;
  return Math.min(p.maxSeconds, p.baseSeconds * p.factor ** (step - 1));
}
