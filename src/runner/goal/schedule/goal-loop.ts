import type { ScheduleView } from "../../../core/goal/schedule/backoff-history.js";
import { nextWake, startWake } from "../../../core/goal/schedule/next-wake.js";
import type { RunMode, ScheduleStep } from "../../../core/goal/schedule/schedule-step.js";
import { type BackoffPolicy, DEFAULT_BACKOFF, type WakeUp } from "../../../core/goal/schedule/scheduler.js";
import { setLongTimeout } from "../../../core/kernel/long-timer.js";
import type { Tick, TickOutcome, TickProgress } from "../turn/tick-outcome.js";

/**
 * The `goal run` loop: tick one governed turn at a time until the goal is terminal, stopped, waiting on
 * a person or throttled, sleeping between ticks as the wake-up says. The decision is core's
 * (`nextWake`, `startWake`); this only carries them out. Time and sleep are injected, so tests
 * never wait; an abort is honoured between turns (a turn in progress settles first).
 */

/** Sleeps until `until` (ISO), or returns early when `signal` aborts. */
export type Sleeper = (until: string, signal: AbortSignal) => Promise<void>;

/** The goal as the scheduler reads it now: contract view and the recorded turns' backoff. */
export type ScheduleProbe = (goalId: string, now: Date) => Promise<ScheduleView>;

/** What the loop reports as it goes (the CLI prints these). */
export type LoopEvent =
  | { kind: "progress"; turn: number; progress: TickProgress }
  | { kind: "turn"; turn: number | null; outcome: TickOutcome; wake: WakeUp; step: ScheduleStep }
  | { kind: "sleep"; turn: number | null; until: string; why: string }
  | { kind: "interrupted"; turn: number };

export interface LoopResult {
  /** 0 terminal (or --once: advanced), 1 waiting or throttled, 2 failure, 130 interrupted. */
  code: 0 | 1 | 2 | 130;
  stop: string;
  why: string;
  who?: string;
  /** Ticks this loop made. */
  turns: number;
  last: TickOutcome | null;
}

export interface LoopDeps {
  tick: Tick;
  probe: ScheduleProbe;
  sleep: Sleeper;
  clock: () => Date;
  policy?: BackoffPolicy;
}

export interface LoopRequest {
  goalId: string;
  agentId: string;
  mode: RunMode;
  /** Aborted by SIGINT/SIGTERM: the loop stops before the next tick and wakes from a sleep. */
  signal: AbortSignal;
  onEvent?: (e: LoopEvent) => void;
}

/** Runs the loop until its schedule says exit (or the signal aborts). */
export async function runGoalLoop(deps: LoopDeps, req: LoopRequest): Promise<LoopResult> {
  const policy = deps.policy ?? DEFAULT_BACKOFF;
  const emit = req.onEvent ?? (() => {});
  let turns = 0;
  let last: TickOutcome | null = null;
  const interrupted = (): LoopResult => {
    emit({ kind: "interrupted", turn: turns });
    return { code: 130, stop: "interrupted", why: "interrupted between turns", turns, last };
  };

  // A restarted host honours the backoff the recorded turns already earned before its first tick.
  const first = startWake(await deps.probe(req.goalId, deps.clock()), deps.clock(), policy);
  if (first) {
    if (req.mode !== "run")
      return { code: 1, stop: "idle", why: `${first.why} (next at ${first.until})`, turns, last };
    emit({ kind: "sleep", turn: turns, until: first.until, why: first.why });
    await deps.sleep(first.until, req.signal);
  }

  for (;;) {
    if (req.signal.aborted) return interrupted();
    // Lines carry the goal's own turn number as the tick reports it; null for a tick that ran no turn.
    let n: number | null = null;
    const outcome = await deps.tick({
      goalId: req.goalId,
      agentId: req.agentId,
      onProgress: (p) => {
        n = p.turn;
        emit({ kind: "progress", turn: p.turn, progress: p });
      },
    });
    turns++;
    last = outcome;
    const at = deps.clock();
    const sv = await deps.probe(req.goalId, at);
    const { wake, step } = nextWake(outcome, sv, {
      now: at,
      host: { kind: "loop", mode: req.mode },
      policy,
    });
    emit({ kind: "turn", turn: n, outcome, wake, step });
    // A turn that ended waiting on a person (a fix, an acceptance or a monitor turn whose wake-up asks
    // the user) is followed by one more tick: it says who must act, or polls a monitor that is due while
    // the goal waits (finite: a poll makes its monitor not due). It runs no other turn and spends nothing.
    if (step.kind === "exit" && step.stop === "waiting_person" && outcome.kind === "advanced") continue;
    if (step.kind === "exit")
      return {
        code: step.code,
        stop: step.stop,
        why: step.why,
        ...(step.who !== undefined ? { who: step.who } : {}),
        turns,
        last,
      };
    if (req.signal.aborted) return interrupted();
    if (step.kind === "sleep") {
      emit({ kind: "sleep", turn: n, until: step.until, why: step.why });
      await deps.sleep(step.until, req.signal);
    }
  }
}

/** The real sleeper: a timer, cut short by the signal. */
export const realSleep: Sleeper = (until, signal) =>
  new Promise<void>((resolve) => {
    const ms = Math.max(0, Date.parse(until) - Date.now());
    if (signal.aborted) return resolve();
    const t = setLongTimeout(done, ms);
    function done() {
      t.clear();
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
