import { hostname } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { parseDuration } from "../../core/duration.js";
import type { Envelope } from "../../core/envelope.js";
import { projectEnvelope } from "../../core/envelope.js";
import { InputError } from "../../core/errors.js";
import { LeaseHeldError } from "../../core/run-lease.js";
import { runPhase } from "../../core/run-phase.js";
import { type LoadedTask, loadTask } from "../../runner/load-task.js";
import { resumeRun } from "../../runner/resume-run.js";
import { RunJournal } from "../../runner/run-journal.js";
import { newRunId, runTask } from "../../runner/run-task.js";
import { materializeTask, TASK_SNAPSHOT_OPTION } from "../../runner/task-snapshot.js";
import type { PostgresEventStore } from "../../store/postgres-event-store.js";
import { type Claim, goalOfJob, type PostgresRunQueue } from "../../store/run-queue.js";
import type { CommandIO } from "../io.js";
import { recordedBuilder } from "./resume.js";
import { chooseBuilder, faultInjection, judgeModelFor, type RunFlags, runSettings } from "./run-common.js";
import { isStoreUnreachable, postgresStoreFrom } from "./submit.js";
import { runGoalTurnJob } from "./worker-goal.js";

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

/** How a job ended for this worker: finished (with the run's status), handed back, or lost. */
type Outcome = { kind: "finished"; status: string } | { kind: "handed-back" } | { kind: "lost"; why: string };

/**
 * `loopgate worker --store postgres://…`: claims queued runs, runs or resumes each (as `loopgate run` and
 * `loopgate resume` do), heartbeats the claim while it runs, and marks it finished. SIGTERM: stop claiming
 * and finish what is held; a second SIGTERM interrupts the held runs and hands them back. Losing the
 * database: every held run is interrupted (nothing uncommitted is kept: each append is one transaction)
 * and the worker exits 1 with the reason.
 */
export async function workerCommand(io: CommandIO, flags: WorkerFlags): Promise<number> {
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
  const me = { workerId, host: hostname(), pid: process.pid, concurrency };
  let fatal: string | null = null;
  let draining = false;
  const held = new Map<string, { claim: Claim; controller: AbortController; done: Promise<void> }>();
  let handingBack = false;
  const onTerm = () => {
    if (!draining) {
      draining = true;
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
      if (draining || (flags.once && claimedAny)) {
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
            if (outcome.kind === "finished") say(`finished ${c.job.jobId}: ${outcome.status}`);
            else if (outcome.kind === "handed-back") say(`handed ${c.job.jobId} back to the queue`);
            else say(`gave up ${c.job.jobId}: ${outcome.why}`);
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
      const waits: Promise<unknown>[] = [
        sleep(Math.min(1000, beat)),
        ...[...held.values()].map((h) => h.done),
      ];
      await Promise.race(waits);
    }
    await Promise.allSettled([...held.values()].map((h) => h.done));
  } catch (e) {
    lose(e);
    await Promise.allSettled([...held.values()].map((h) => h.done));
  } finally {
    clearInterval(presence);
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
    // A job that cannot run (its task file is gone or changed, bad options) is finished with the reason.
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

/**
 * The task a job runs: its snapshot in the store, written out under `local` (a job submitted before
 * snapshots: the task file at the path submitted, which must not have changed since).
 */
async function jobTask(
  job: Claim["job"],
  snapshot: string | null,
  store: PostgresEventStore,
  local: string | undefined,
): Promise<LoadedTask> {
  if (snapshot !== null && local !== undefined)
    return materializeTask(store.content(), snapshot, local, job.taskDigest);
  const loaded = loadTask(job.taskPath);
  if (loaded.digest !== job.taskDigest)
    throw new InputError(
      `the task file changed since the job was submitted (digest ${loaded.digest}, submitted ${job.taskDigest})`,
      job.taskPath,
    );
  return loaded;
}

/**
 * Runs the job's task, resumes its run, or reads the verdict of a run that finished already. The run
 * folder is this worker's own (`<its folder>/runs/<run id>`), wherever the run started: a run another
 * machine drove is rebuilt from the store's observations (see runner/shared-content.ts). The run's
 * lease is as long as the queue's, so both expire together.
 */
async function runJob(
  claim: Claim,
  queue: PostgresRunQueue,
  store: PostgresEventStore,
  url: string,
  leaseMs: number,
  signal: AbortSignal,
  say: (line: string) => void,
  workDir: string | undefined,
): Promise<Envelope> {
  const { job, token } = claim;
  const { cwd, [TASK_SNAPSHOT_OPTION]: snapshot, ...options } = job.options;
  const flags = { ...options, store: url } as RunFlags;
  // The run folder's root on this machine: --work-dir, else .loopgate beside the task file (for a task
  // the store holds a snapshot of: ./.loopgate, where the snapshot is written out too).
  const local = workDir ?? (typeof snapshot === "string" ? ".loopgate" : undefined);
  const loaded = await jobTask(job, typeof snapshot === "string" ? snapshot : null, store, local);
  const settings = runSettings(loaded, flags);
  const s = local === undefined ? settings : { ...settings, storeDir: resolve(local) };
  let runId = job.runId;
  if (runId === null) {
    runId = newRunId();
    if (!(await queue.setRunId(job.jobId, token, runId)))
      throw new Error("lost the job before its run started");
  }
  const runDir = join(s.storeDir, "runs", runId);
  for (;;) {
    const events = await store.readStream(RunJournal.stream(runId));
    const finished =
      events.length > 0 && runPhase(events) === "finished" ? projectEnvelope(runId, events) : null;
    if (finished) return finished;
    if (events[0]?.type !== "run_started") break;
    try {
      // As `loopgate resume` does (an in-doubt mutating call is rolled back and reported, never re-run).
      return await resumeRun({
        ...faultInjection(),
        runId,
        store,
        storeDir: s.storeDir,
        runDir,
        leaseTtlMs: leaseMs,
        allowEnv: flags["builder-env"] ?? [],
        mounts: flags["builder-mount"] ?? [],
        signal,
        builder: recordedBuilder(flags, undefined, undefined, loaded.oracle),
        taskFile: loaded.file,
      });
    } catch (e) {
      // The queue's lease expired but the run's is still live: its holder may be alive (on a host whose
      // process table this worker cannot see), so the run is not taken from it. This worker keeps the
      // claim (heartbeating it) and waits for the run's lease to expire, then tries again.
      if (!(e instanceof LeaseHeldError) || signal.aborted) throw e;
      const waitMs = Math.min(Math.max(Date.parse(e.lease.expiresAt) - Date.now(), 0) + 250, leaseMs);
      say(
        `run ${runId} is still leased by process ${e.lease.owner.pid} on ${e.lease.owner.host} until ${e.lease.expiresAt}; waiting ${waitMs} ms for that lease to expire before taking the run over`,
      );
      await sleep(waitMs, undefined, { signal }).catch(() => {});
      if (signal.aborted) throw e;
    }
  }
  return runTask({
    ...faultInjection(),
    runId,
    signal,
    loaded,
    builder: chooseBuilder(loaded, flags, typeof cwd === "string" ? cwd : process.cwd()),
    store,
    storeDir: s.storeDir,
    leaseTtlMs: leaseMs,
    sandbox: s.sandbox,
    allowEnv: flags["builder-env"] ?? [],
    mounts: s.mounts,
    ...(flags.network ? { network: true } : {}),
    ...(s.maxAttempts !== undefined ? { maxAttempts: s.maxAttempts } : {}),
    ...judgeModelFor(loaded, flags),
  });
}
