import { nextWake, RECHECK_SECONDS } from "../../../core/goal/schedule/next-wake.js";
import { RETRIED_FAILURES } from "../../../core/goal/schedule/schedule-step.js";
import { type BackoffPolicy, DEFAULT_BACKOFF, plusSeconds } from "../../../core/goal/schedule/scheduler.js";
import type { Tick, TickOutcome } from "../turn/tick-outcome.js";
import type { LoopEvent, ScheduleProbe, Sleeper } from "./goal-loop.js";

/**
 * `loopgate scheduler`: every active goal of a store, in one process, one turn at a time per goal.
 * Each goal has its own next look (core's `nextWake` for a long-lived host: the tick's wake-up, the
 * recorded turns' backoff); the earliest due goal is ticked next; the goal list is read again every pass, so goals
 * created, resumed or stopped meanwhile are picked up. A goal waiting on a person is looked at again
 * every `recheckSeconds` (a person's write is what changes it); a terminal one is dropped.
 */

/** A goal the scheduler may tick: active and not closed. */
export interface ScheduledGoal {
  goalId: string;
  agentId: string;
}

export type SchedulerEvent =
  | { kind: "goal"; goalId: string; event: LoopEvent }
  | { kind: "next"; goalId: string; at: string | null; why: string }
  | { kind: "error"; goalId: string; message: string }
  | { kind: "idle"; until: string };

export interface SchedulerDeps {
  /** The goals to schedule now (read again every pass). */
  goals: () => Promise<ScheduledGoal[]>;
  tick: Tick;
  probe: ScheduleProbe;
  sleep: Sleeper;
  clock: () => Date;
  policy?: BackoffPolicy;
}

export interface SchedulerRequest {
  /** One pass: tick every due goal once, then return. */
  once: boolean;
  /** How often a goal waiting on a person is looked at again (default: core's RECHECK_SECONDS). */
  recheckSeconds?: number;
  signal: AbortSignal;
  onEvent?: (e: SchedulerEvent) => void;
}

export interface SchedulerResult {
  /** 0: stopped cleanly, or a pass (`once`) with no failure; 2: in that pass a tick threw or needs repair. */
  code: 0 | 2;
  ticks: number;
  failures: number;
}

const needsRepair = (o: TickOutcome) =>
  (o.kind === "failed" && !RETRIED_FAILURES.includes(o.code)) ||
  (o.kind === "stopped" && o.wake.action === "repair_health");

/** Runs the store's goals until the signal aborts (or one pass with `once`). */
export async function runScheduler(deps: SchedulerDeps, req: SchedulerRequest): Promise<SchedulerResult> {
  const policy = deps.policy ?? DEFAULT_BACKOFF;
  const emit = req.onEvent ?? (() => {});
  const recheckSeconds = req.recheckSeconds ?? RECHECK_SECONDS;
  const due = new Map<string, string>();
  const dropped = new Set<string>();
  let ticks = 0;
  let failures = 0;
  for (;;) {
    if (req.signal.aborted) break;
    const goals = await deps.goals();
    const listed = new Set(goals.map((g) => g.goalId));
    for (const id of [...due.keys()]) if (!listed.has(id)) due.delete(id);
    const now = deps.clock();
    for (const g of goals)
      if (!due.has(g.goalId) && !dropped.has(g.goalId)) due.set(g.goalId, now.toISOString());
    const ready = goals
      .filter((g) => {
        const at = due.get(g.goalId);
        return at !== undefined && Date.parse(at) <= now.getTime();
      })
      .sort((a, b) => Date.parse(due.get(a.goalId) ?? "") - Date.parse(due.get(b.goalId) ?? ""));
    for (const g of ready) {
      if (req.signal.aborted) break;
      // The goal's own turn number as the tick reports it; null for a tick that ran no turn.
      let n: number | null = null;
      ticks++;
      let outcome: TickOutcome;
      try {
        outcome = await deps.tick({
          goalId: g.goalId,
          agentId: g.agentId,
          onProgress: (p) => {
            n = p.turn;
            emit({ kind: "goal", goalId: g.goalId, event: { kind: "progress", turn: p.turn, progress: p } });
          },
        });
      } catch (e) {
        failures++;
        const message = e instanceof Error ? e.message : String(e);
        emit({ kind: "error", goalId: g.goalId, message });
        const at = plusSeconds(deps.clock(), recheckSeconds);
        due.set(g.goalId, at);
        emit({ kind: "next", goalId: g.goalId, at, why: "the tick failed; looking again later" });
        continue;
      }
      if (needsRepair(outcome)) failures++;
      const t = deps.clock();
      const sv = await deps.probe(g.goalId, t);
      const { wake, step } = nextWake(outcome, sv, {
        now: t,
        host: { kind: "long_lived", recheckSeconds: recheckSeconds },
        policy,
      });
      emit({ kind: "goal", goalId: g.goalId, event: { kind: "turn", turn: n, outcome, wake, step } });
      const at = step.kind === "sleep" ? step.until : null;
      emit({ kind: "next", goalId: g.goalId, at, why: step.why });
      if (at === null) {
        due.delete(g.goalId);
        dropped.add(g.goalId);
      } else due.set(g.goalId, at);
    }
    if (req.once || req.signal.aborted) break;
    const earliest = [...due.values()].sort((a, b) => Date.parse(a) - Date.parse(b))[0];
    // Look for new or resumed goals at least every recheck interval.
    const recheck = plusSeconds(deps.clock(), recheckSeconds);
    const until = earliest && Date.parse(earliest) < Date.parse(recheck) ? earliest : recheck;
    if (Date.parse(until) > deps.clock().getTime()) {
      emit({ kind: "idle", until });
      await deps.sleep(until, req.signal);
    }
  }
  return { code: req.once && failures > 0 ? 2 : 0, ticks, failures };
}
