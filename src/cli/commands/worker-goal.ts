import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { DomainError, InputError } from "../../core/errors.js";
import {
  backoffAtBound,
  DEFAULT_BACKOFF,
  effectiveWake,
  scheduleStep,
  type WakeUp,
} from "../../core/goal/turn/index.js";
import { LeaseHeldError } from "../../core/run-lease.js";
import { openGoal } from "../../runner/goal/goal-service.js";
import { storeProbe } from "../../runner/goal/schedule/schedule-probe.js";
import { makeTick } from "../../runner/goal/turn/tick.js";
import type { RunHost, ScheduleHost } from "../../runner/goal/turn/tick-context.js";
import type { TickOutcome } from "../../runner/goal/turn/tick-outcome.js";
import type { PostgresEventStore } from "../../store/postgres-event-store.js";
import type { Claim, JobOptions, PostgresRunQueue } from "../../store/run-queue.js";
import type { CommandIO } from "../io.js";
import { goalFaultInjection, goalRunHost, plannerFor } from "./goal-turn-host.js";
import { startStep, usableFolder } from "./job-start.js";
import type { RunFlags } from "./run-common.js";

/** The options of a goal-turn job that are not run flags (`cwd` is kept: where relative paths resolve). */
const OWN = new Set(["job_kind", "goal_id", "not_before"]);

/** The run flags a goal-turn job carries (what `goal submit` was given), for the turns' runs. */
export function goalJobOptions(options: JobOptions): JobOptions {
  const out: JobOptions = {};
  for (const [k, v] of Object.entries(options)) if (!OWN.has(k)) out[k] = v;
  return out;
}

/**
 * A claimed goal-turn job: ONE governed tick of the goal (`goal tick`), under the goal's turn lease (one
 * turn at a time per goal, whichever worker holds the job), with this worker's folder as the host's
 * local folder (run folders, the goal's cache repository). The scheduler host is the queue: the turn's
 * scheduler_apply is followed by the enqueue of the next turn at the wake-up, and scheduler_ack records
 * what the enqueue did (`host_updated`: a turn was queued or moved earlier; `host_match`: the queued turn
 * already wakes by then). A tick that settled no turn (busy, idle, waiting, failed) is scheduled as
 * `goal run` would: exit (nothing queued), or the next turn queued at the wake-up. What fails before the
 * tick for a reason of this machine (its folder, say) throws LocalStartError: the job goes back unclaimed.
 */
export async function runGoalTurnJob(
  io: CommandIO,
  claim: Claim,
  goalId: string,
  queue: PostgresRunQueue,
  store: PostgresEventStore,
  leaseMs: number,
  signal: AbortSignal,
  say: (line: string) => void,
  workDir: string | undefined,
): Promise<{ status: string }> {
  const options = claim.job.options;
  const cwd = typeof options.cwd === "string" ? options.cwd : process.cwd();
  const dir = resolve(workDir ?? join(cwd, ".loopgate"));
  const carried = goalJobOptions(options);
  const flags = { ...carried } as RunFlags;
  usableFolder(dir);
  // Opening the goal changes nothing: an input error there is the goal's (the job is finished as
  // refused), any other this machine's (the job goes back unclaimed).
  const { view } = await startStep(null, () => openGoal(store, dir, goalId));
  let enqueued: string | null = null;
  const scheduleHost: ScheduleHost = async (wake: WakeUp) => {
    const r = await queue.submitGoalTurn(goalId, carried, wake.at);
    enqueued = r.job.jobId;
    return r.mode;
  };
  const host = goalRunHost(io, store, dir, flags, { signal, leaseTtlMs: leaseMs });
  // A dead worker's run lease can outlive its turn lease by a heartbeat: wait for it, then take the run over.
  const runHost: RunHost = async (run) => {
    for (;;) {
      try {
        return await host(run);
      } catch (e) {
        if (!(e instanceof LeaseHeldError) || signal.aborted) throw e;
        const waitMs = Math.min(Math.max(Date.parse(e.lease.expiresAt) - Date.now(), 0) + 250, leaseMs);
        say(
          `run ${run.runId} is still leased until ${e.lease.expiresAt}; waiting ${waitMs} ms to take it over`,
        );
        await sleep(waitMs, undefined, { signal }).catch(() => {});
      }
    }
  };
  // The planner turns' model as goal run chooses it (the goal file's planner, else the builder's --model).
  const planner = plannerFor(flags);
  const tick = makeTick({
    store,
    storeDir: dir,
    runHost,
    ...(planner ? { planner } : {}),
    scheduleHost,
    leaseTtlMs: leaseMs,
    ...goalFaultInjection(),
  });
  let outcome: TickOutcome;
  try {
    outcome = await tick({
      goalId,
      agentId: view.agent.agent_id,
      signal,
      onProgress: (p) =>
        say(`goal ${goalId} turn ${p.turn}${p.todo ? ` · ${p.todo}` : ""} · ${p.phase}: ${p.detail}`),
    });
  } catch (e) {
    // At least once: a tick that failed on something other than bad input is queued again, after a
    // lease's length (the next claimer resumes the turn by readback); the job ends with the reason.
    if (!signal.aborted && !(e instanceof InputError) && !(e instanceof DomainError)) {
      const at = new Date((await queue.now()).getTime() + leaseMs).toISOString();
      await queue.submitGoalTurn(goalId, carried, at).catch(() => {});
    }
    throw e;
  }
  const status = `GOAL_TURN ${outcome.kind}${outcome.kind === "failed" ? ` (${outcome.code})` : ""}`;
  if (signal.aborted) return { status };
  if (outcome.kind === "advanced") {
    say(`goal ${goalId}: ${outcome.result}; next turn ${enqueued ? `queued as ${enqueued}` : "not queued"}`);
    return { status };
  }
  // No turn settled, so no scheduler_ack queued the next one: decide as `goal run` does.
  const now = await queue.now();
  const sv = await storeProbe(store, dir)(goalId, now);
  const wake = effectiveWake(outcome.wake, sv, now.toISOString(), DEFAULT_BACKOFF);
  const step = scheduleStep(outcome, wake, {
    now: now.toISOString(),
    mode: "run",
    atBound: backoffAtBound(sv, DEFAULT_BACKOFF),
    policy: DEFAULT_BACKOFF,
  });
  if (step.kind === "exit") {
    say(`goal ${goalId}: ${step.stop}: ${step.why}; no turn queued (goal submit queues it again)`);
    return { status: step.stop === outcome.kind ? status : `${status}: ${step.stop}` };
  }
  const at = step.kind === "sleep" ? step.until : null;
  const r = await queue.submitGoalTurn(goalId, carried, at);
  say(`goal ${goalId}: ${outcome.kind}; next turn ${r.job.jobId}${at ? ` not before ${at}` : ""}`);
  return { status };
}
