import { join, resolve } from "node:path";
import { nextWake } from "../../core/goal/schedule/next-wake.js";
import type { WakeUp } from "../../core/goal/schedule/scheduler.js";
import { DomainError, InputError } from "../../core/kernel/errors.js";
import { LeaseHeldError } from "../../core/run/run-lease.js";
import type { JobOptions } from "../../store/postgres/run-queue.js";
import { openGoal } from "../goal/goal-service.js";
import { deliverNotifications, NOTIFY_LINGER_MS, notifyLine } from "../goal/notify/notify-deliver.js";
import { storeProbe } from "../goal/schedule/schedule-probe.js";
import { makeTick } from "../goal/turn/tick.js";
import type { RunHost, ScheduleHost } from "../goal/turn/tick-context.js";
import type { TickOutcome } from "../goal/turn/tick-outcome.js";
import { goalRunHost } from "./goal-run-host.js";
import type { JobContext } from "./job-context.js";
import { startStep, usableFolder } from "./job-start.js";
import { plannerFor } from "./planner.js";
import { goalFaults, type RunFlags } from "./run-flags.js";

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
export async function runGoalTurnJob(ctx: JobContext, goalId: string): Promise<{ status: string }> {
  const { claim, queue, store, leaseMs, signal, note: say, workDir } = ctx;
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
  const host = goalRunHost(
    { store, localDir: dir, flags, kit: ctx.kit, faults: ctx.faults, warn: ctx.warn },
    { signal, leaseTtlMs: leaseMs },
  );
  // A dead worker's run lease can outlive its turn lease by a heartbeat: wait for it, then take the run over.
  const runHost: RunHost = async (run) => {
    for (;;) {
      try {
        return await host(run);
      } catch (e) {
        if (!(e instanceof LeaseHeldError) || signal.aborted) throw e;
        const waitMs = Math.min(Math.max(Date.parse(e.lease.expiresAt) - ctx.now(), 0) + 250, leaseMs);
        say(
          `run ${run.runId} is still leased until ${e.lease.expiresAt}; waiting ${waitMs} ms to take it over`,
        );
        await ctx.sleep(waitMs, signal);
      }
    }
  };
  // The planner turns' model as goal run chooses it (the goal file's planner, else the builder's --model).
  const planner = plannerFor(flags);
  const tick = makeTick({
    store,
    localDir: dir,
    runHost,
    ...(planner ? { planner } : {}),
    scheduleHost,
    leaseTtlMs: leaseMs,
    ...goalFaults(ctx.faults),
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
  // The turn is settled (or none ran): the goal's notifications go out now, never failing the job.
  await deliverNotifications({ store, localDir: dir, onReport: (r) => say(notifyLine(r)) }, goalId, {
    lingerMs: NOTIFY_LINGER_MS,
    signal,
  });
  const status = `GOAL_TURN ${outcome.kind}${outcome.kind === "failed" ? ` (${outcome.code})` : ""}`;
  if (signal.aborted) return { status };
  if (outcome.kind === "advanced") {
    say(`goal ${goalId}: ${outcome.result}; next turn ${enqueued ? `queued as ${enqueued}` : "not queued"}`);
    return { status };
  }
  // No turn settled, so no scheduler_ack queued the next one: decide as `goal run` does.
  const now = await queue.now();
  const sv = await storeProbe(store, dir)(goalId, now);
  const { step } = nextWake(outcome, sv, { now, host: { kind: "loop", mode: "run" } });
  if (step.kind === "exit") {
    say(`goal ${goalId}: ${step.stop}: ${step.why}; no turn queued (goal submit queues it again)`);
    return { status: step.stop === outcome.kind ? status : `${status}: ${step.stop}` };
  }
  const at = step.kind === "sleep" ? step.until : null;
  const r = await queue.submitGoalTurn(goalId, carried, at);
  say(`goal ${goalId}: ${outcome.kind}; next turn ${r.job.jobId}${at ? ` not before ${at}` : ""}`);
  return { status };
}
