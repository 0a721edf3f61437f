import { hostname } from "node:os";
import { parseDuration } from "../../core/duration.js";
import { InputError } from "../../core/errors.js";
import type { PostgresEventStore } from "../../store/postgres-event-store.js";
import { QueueListener } from "../../store/queue-listener.js";
import { QUEUE_POLICY, type QueuePolicy, WAKE_POLICY, type WakePolicy } from "../../store/queue-policy.js";
import { type Claim, goalOfJob, type PostgresRunQueue } from "../../store/run-queue.js";
import type { CommandIO } from "../io.js";
import { LocalStartError } from "./job-start.js";
import { isStoreUnreachable, postgresStoreFrom } from "./submit.js";
import { runGoalTurnJob } from "./worker-goal.js";
import { runJob } from "./worker-run.js";

export interface WorkerFlags {
  store?: string;
  json?: boolean;
  concurrency?: number;
  id?: string;
  once?: boolean;
  "until-idle"?: boolean;
  lease?: string;
  "work-dir"?: string;
}

/**
 * How a job ended for this worker: finished (with the run's status; a bad task is finished as refused),
 * handed back on SIGTERM, handed back because this machine could not start it (`local`, with the
 * reason), or lost.
 */
type Outcome =
  | { kind: "finished"; status: string }
  | { kind: "handed-back" }
  | { kind: "local"; reason: string }
  | { kind: "lost"; why: string };

/**
 * `loopgate worker --store postgres://…`: claims queued runs, runs or resumes each (as `loopgate run` and
 * `loopgate resume` do), heartbeats the claim while it runs, and marks it finished. SIGTERM: stop claiming
 * and finish what is held; a second SIGTERM interrupts the held runs and hands them back. Losing the
 * database: every held run is interrupted (nothing uncommitted is kept: each append is one transaction)
 * and the worker exits 1 with the reason. A job it cannot start for a reason of this machine goes back
 * to the queue with the reason; after `policy.localFailuresToStop` of those in a row (with --once: its one
 * job) it claims nothing more, finishes what it holds and exits 1 naming the last reason.
 */
export async function workerCommand(
  io: CommandIO,
  flags: WorkerFlags,
  policy: QueuePolicy = QUEUE_POLICY,
  wakePolicy: WakePolicy = WAKE_POLICY,
): Promise<number> {
  if (flags.once && flags["until-idle"])
    throw new InputError("give --once or --until-idle, not both", "loopgate worker");
  const concurrency = flags.concurrency ?? 1;
  const leaseMs = flags.lease === undefined ? 30_000 : parseDuration(flags.lease);
  if (leaseMs === null || leaseMs < 1000)
    throw new InputError(
      `expected a duration of at least 1s (e.g. 30s, 2m), got ${JSON.stringify(flags.lease)}`,
      "--lease",
    );
  const workerId = flags.id ?? `${hostname()}-${process.pid}`;
  if (!/^[A-Za-z0-9._@-]{1,100}$/.test(workerId))
    throw new InputError(
      `a worker id is 1 to 100 letters, digits, '.', '_', '@' or '-', got ${JSON.stringify(workerId)}`,
      "--id",
    );
  const workDir = flags["work-dir"];
  const { where, store } = await postgresStoreFrom(flags.store, "loopgate worker");
  const queue = store.queue();
  const say = (line: string) => io.err(`loopgate worker ${workerId}: ${line}\n`);
  const beat = Math.max(250, Math.floor(leaseMs / 3));
  const idlePollMs = Math.min(wakePolicy.idlePollMs, beat);
  const me = { workerId, host: hostname(), pid: process.pid, concurrency, beatMs: beat };
  // An idle worker wakes on the queue's NOTIFY and polls as the fallback (see queue-listener.ts).
  let listenerDown = false;
  const listener = QueueListener.start({
    url: where.url,
    pgSchema: store.pgSchema,
    policy: wakePolicy,
    onState: (st) => {
      if (st.state === "retrying" && !listenerDown) {
        listenerDown = true;
        say(
          `lost the notification connection (${st.lastError}); polling every ${idlePollMs} ms until it is back`,
        );
      } else if (st.state === "listening" && listenerDown) {
        listenerDown = false;
        say("notification connection back");
      }
    },
  });
  let fatal: string | null = null;
  // Local start failures in a row (any job); a job that started, or was refused for its task, ends it.
  const stopAfter = flags.once ? 1 : policy.localFailuresToStop;
  let localInRow = 0;
  let cannotWork: string | null = null;
  let draining = false;
  const held = new Map<string, { claim: Claim; controller: AbortController; done: Promise<void> }>();
  let handingBack = false;
  // The idle wait in progress, if any: SIGTERM ends it, so an idle worker stops at once.
  let idle: AbortController | null = null;
  const onTerm = () => {
    if (!draining) {
      draining = true;
      idle?.abort();
      say(
        `SIGTERM: claiming nothing more, finishing the ${held.size} run(s) held (SIGTERM again hands them back)`,
      );
      return;
    }
    handingBack = true;
    say("SIGTERM again: interrupting the held runs and handing them back");
    for (const h of held.values()) h.controller.abort("SIGTERM");
  };
  const lose = (e: unknown) => {
    if (fatal) return;
    fatal = `lost the database ${where.label}: ${e instanceof Error ? e.message : String(e)}`;
    idle?.abort();
    for (const h of held.values()) h.controller.abort("database lost");
  };
  process.on("SIGTERM", onTerm);
  process.on("SIGINT", onTerm);
  const presence = setInterval(() => {
    queue.announceWorker(me, leaseMs).catch(lose);
  }, beat);
  let claimedAny = false;
  try {
    await queue.announceWorker(me, leaseMs);
    say(`claiming from ${where.label} (concurrency ${concurrency}, lease ${leaseMs} ms)`);
    for (;;) {
      if (fatal) break;
      if (draining || cannotWork || (flags.once && claimedAny)) {
        if (held.size === 0) break;
        await Promise.race([...held.values()].map((h) => h.done));
        continue;
      }
      let claim: Claim | null = null;
      if (held.size < concurrency)
        claim = await queue.claim(workerId, leaseMs).catch((e: unknown) => {
          lose(e);
          return null;
        });
      if (claim) {
        claimedAny = true;
        const c = claim;
        const controller = new AbortController();
        say(`claimed ${c.job.jobId} (attempt ${c.job.attempts}${c.job.runId ? `, run ${c.job.runId}` : ""})`);
        const done = holdJob(
          io,
          c,
          controller,
          queue,
          store,
          where.url,
          leaseMs,
          beat,
          lose,
          () => handingBack,
          say,
          workDir,
        )
          .then((outcome) => {
            if (outcome.kind === "finished") {
              localInRow = 0;
              say(`finished ${c.job.jobId}: ${outcome.status}`);
            } else if (outcome.kind === "handed-back") say(`handed ${c.job.jobId} back to the queue`);
            else if (outcome.kind === "local") {
              localInRow++;
              say(
                `could not start ${c.job.jobId} on this machine (${localInRow} in a row): ${outcome.reason}; handed it back to the queue`,
              );
              if (localInRow >= stopAfter && !cannotWork)
                cannotWork = `could not start ${localInRow} job(s) in a row on this machine; last reason: ${outcome.reason}`;
            } else say(`gave up ${c.job.jobId}: ${outcome.why}`);
          })
          .finally(() => held.delete(c.job.jobId));
        held.set(c.job.jobId, { claim: c, controller, done });
        continue;
      }
      if (flags.once && held.size === 0) break;
      if (flags["until-idle"] && held.size === 0) {
        const left = await queue.unfinished().catch((e: unknown) => {
          lose(e);
          return -1;
        });
        if (left === 0) break;
      }
      // Idle (or full): a notification, the poll, or a held job ending, whichever is first.
      idle = new AbortController();
      await Promise.race([listener.wait(idlePollMs, idle.signal), ...[...held.values()].map((h) => h.done)]);
      idle.abort();
      idle = null;
    }
    await Promise.allSettled([...held.values()].map((h) => h.done));
  } catch (e) {
    lose(e);
    await Promise.allSettled([...held.values()].map((h) => h.done));
  } finally {
    clearInterval(presence);
    await listener.close();
    process.off("SIGTERM", onTerm);
    process.off("SIGINT", onTerm);
    if (!fatal) await queue.retireWorker(workerId, process.pid).catch(() => {});
    await store.close().catch(() => {});
  }
  if (fatal) {
    io.err(
      `loopgate worker ${workerId}: ${fatal}; stopping (what was committed stays; a held job is claimed again when its lease expires)\n`,
    );
    return 1;
  }
  if (cannotWork) {
    io.err(
      `loopgate worker ${workerId}: ${cannotWork}; stopping (the jobs are back in the queue, unclaimed, for another worker)\n`,
    );
    if (flags.json) io.out(`${JSON.stringify({ worker_id: workerId, stopped: true, error: cannotWork })}\n`);
    return 1;
  }
  if (flags.json) io.out(`${JSON.stringify({ worker_id: workerId, stopped: true })}\n`);
  return 0;
}

/** Drives one claimed job to an outcome, heartbeating its claim every `beat` ms. */
async function holdJob(
  io: CommandIO,
  claim: Claim,
  controller: AbortController,
  queue: PostgresRunQueue,
  store: PostgresEventStore,
  url: string,
  leaseMs: number,
  beat: number,
  lose: (e: unknown) => void,
  handingBack: () => boolean,
  say: (line: string) => void,
  workDir: string | undefined,
): Promise<Outcome> {
  const { job, token } = claim;
  let lost: string | null = null;
  const timer = setInterval(() => {
    queue.heartbeat(job.jobId, token, leaseMs).then(
      (until) => {
        if (until === null && !lost) {
          lost = "its lease expired before the heartbeat (another worker may hold it now)";
          controller.abort("lease lost");
        }
      },
      (e: unknown) => {
        if (isStoreUnreachable(e)) lose(e);
      },
    );
  }, beat);
  try {
    const goalId = goalOfJob(job);
    const work: Promise<{ status: string }> =
      goalId === null
        ? runJob(claim, queue, store, url, leaseMs, controller.signal, say, workDir)
        : runGoalTurnJob(io, claim, goalId, queue, store, leaseMs, controller.signal, say, workDir);
    const env = await work.catch((e: unknown) => {
      if (isStoreUnreachable(e)) lose(e);
      return e instanceof Error ? e : new Error(String(e));
    });
    if (lost) return { kind: "lost", why: lost };
    if (controller.signal.aborted) {
      if (handingBack() && (await queue.release(job.jobId, token).catch(() => false)))
        return { kind: "handed-back" };
      return { kind: "lost", why: `interrupted (${String(controller.signal.reason)})` };
    }
    // This machine could not start it (its folder, the sandbox, a key it lacks): back to the queue,
    // unclaimed, with the reason; never finished, since another machine may run it.
    if (env instanceof LocalStartError) {
      const reason = env.message.slice(0, 500);
      if (await queue.handBack(job.jobId, token, reason).catch(() => false)) return { kind: "local", reason };
      return { kind: "lost", why: `its lease expired before it could be handed back (${reason})` };
    }
    // A job whose task is bad (an invalid task file, a broken snapshot) fails alike on every worker:
    // it is finished as refused, with the reason.
    const status = env instanceof Error ? `REFUSED: ${env.message}`.slice(0, 500) : env.status;
    if (await queue.finish(job.jobId, token, status)) return { kind: "finished", status };
    return {
      kind: "lost",
      why: "its lease expired before it finished; the next claimer finds the run finished",
    };
  } finally {
    clearInterval(timer);
  }
}
