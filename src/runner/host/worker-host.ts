import { hostname } from "node:os";
import { setTimeout as delay } from "node:timers/promises";
import type { QueuePolicy, WakePolicy } from "../../store/kernel/queue-policy.js";
import type { PostgresEventStore } from "../../store/postgres/postgres-event-store.js";
import { QueueListener } from "../../store/postgres/queue-listener.js";
import { type Claim, goalOfJob } from "../../store/postgres/run-queue.js";
import { HELD, keepLeaseAlive, renewEvery } from "../stream/lease-keeper.js";
import type { JobContext } from "./job-context.js";
import { isStoreUnreachable, LocalStartError } from "./job-start.js";
import type { RunFaults, RunKit } from "./run-flags.js";
import { transition, type WorkerState } from "./worker-state.js";

/** The worker's shortest beat: a short lease must not turn its heartbeats and polls into load on the database. */
const MIN_BEAT_MS = 250;

/** What a worker is made of: plain values (the CLI parses its flags into these once) and injected effects. */
export interface WorkerOptions {
  store: PostgresEventStore;
  /** The store's URL (the queue's notifications; a run job's runs record it as their store). */
  url: string;
  /** The store as its user names it (credentials left out), for the reasons the worker gives. */
  label: string;
  /** Jobs held at once. */
  concurrency: number;
  id: string;
  /** Claim one job, drive it, stop. */
  once: boolean;
  /** Stop once the queue has nothing unfinished. */
  untilIdle: boolean;
  /** The claim's lease; heartbeats come every third of it. */
  leaseMs: number;
  /** This machine's folder for run folders and written-out tasks (undefined: ./.loopgate). */
  workDir: string | undefined;
  policy: QueuePolicy;
  wakePolicy: WakePolicy;
  kit: RunKit;
  faults: RunFaults;
  /** What the worker reports as it goes (the CLI prints it). */
  onEvent?: (e: WorkerEvent) => void;
  /** The job kinds (default: runner/host's run job and goal-turn job). */
  jobs?: WorkerJobs;
  /** The clock and the sleep of the lease waits (tests inject them). */
  now?: () => number;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** This machine and process, as the worker announces itself (default: the host name, this pid). */
  host?: string;
  pid?: number;
}

/** The kinds of job a worker runs: a task's run, or one governed turn of a goal. */
export interface WorkerJobs {
  run: (ctx: JobContext) => Promise<{ status: string }>;
  goalTurn: (ctx: JobContext, goalId: string) => Promise<{ status: string }>;
}

/** What a worker reports. */
export type WorkerEvent =
  | { kind: "claiming"; label: string; concurrency: number; leaseMs: number }
  | { kind: "listener_lost"; error: string; pollMs: number }
  | { kind: "listener_back" }
  | { kind: "draining"; held: number }
  | { kind: "handing_back" }
  | { kind: "claimed"; jobId: string; attempt: number; runId: string | null }
  | { kind: "finished"; jobId: string; status: string }
  | { kind: "handed_back"; jobId: string }
  | { kind: "local_failure"; jobId: string; inRow: number; reason: string }
  | { kind: "gave_up"; jobId: string; why: string }
  /** A claim found a job at the cap of lost claims and finished it as TOOL_FAILURE (the queue's dead letter). */
  | { kind: "dead_letter"; jobId: string; reason: string }
  /** A line about a job (a lease wait, a goal turn's progress). */
  | { kind: "note"; line: string }
  /** A run's warning. */
  | { kind: "warning"; text: string };

/** How a worker ended: stopped cleanly, or failed (the database lost, or jobs it could not start). */
export type WorkerResult =
  | { state: "stopped" }
  | { state: "failed"; reason: "lost_database" | "cannot_work"; message: string };

/** A worker: `run` claims and drives jobs until it ends; `stop` asks it to (see createWorker). */
export interface Worker {
  readonly id: string;
  readonly state: WorkerState;
  run(): Promise<WorkerResult>;
  /** First request: claim nothing more, finish what is held. Second: interrupt the held jobs, hand them back. */
  stop(): void;
}

/**
 * How a job ended for this worker: finished (with the run's status; a bad task is finished as refused),
 * handed back on a second stop request, handed back because this machine could not start it (`local`,
 * with the reason), or lost.
 */
type Outcome =
  | { kind: "finished"; status: string }
  | { kind: "handed-back" }
  | { kind: "local"; reason: string }
  | { kind: "lost"; why: string };

interface Held {
  claim: Claim;
  controller: AbortController;
  done: Promise<void>;
}

/**
 * A worker over a PostgreSQL queue: claims queued jobs (up to `concurrency`), drives each (a run job or a
 * goal turn), heartbeats each claim while it runs, and marks it finished. The first stop request drains
 * (claim nothing more, finish what is held); a second interrupts the held jobs and hands them back.
 * Losing the database: every held job is interrupted (nothing uncommitted is kept: each append is one
 * transaction) and the worker fails with the reason. A job it cannot start for a reason of this machine
 * goes back to the queue with the reason; after `policy.localFailuresToStop` of those in a row (with
 * `once`: its one job) it claims nothing more, finishes what it holds and fails naming the last reason.
 */
export function createWorker(o: WorkerOptions): Worker {
  const emit = o.onEvent ?? (() => {});
  const jobs = o.jobs ?? defaultJobs;
  const now = o.now ?? Date.now;
  const sleep =
    o.sleep ?? ((ms: number, signal: AbortSignal) => delay(ms, undefined, { signal }).catch(() => {}));
  const queue = o.store.queue();
  // The claims' heartbeat, the worker's presence and its idle poll share one beat: a third of the lease.
  const beat = renewEvery(o.leaseMs, MIN_BEAT_MS);
  const idlePollMs = Math.min(o.wakePolicy.idlePollMs, beat);
  const pid = o.pid ?? process.pid;
  const me = { workerId: o.id, host: o.host ?? hostname(), pid, concurrency: o.concurrency, beatMs: beat };
  let state: WorkerState = "running";
  let started = false;
  let fatal: string | null = null;
  let cannotWork: string | null = null;
  let handingBack = false;
  const held = new Map<string, Held>();
  // The idle wait in progress, if any: a stop request ends it, so an idle worker stops at once.
  let idle: AbortController | null = null;
  const move = (to: WorkerState) => {
    state = transition(state, to);
  };

  const lose = (e: unknown) => {
    if (fatal) return;
    fatal = `lost the database ${o.label}: ${e instanceof Error ? e.message : String(e)}`;
    idle?.abort();
    for (const h of held.values()) h.controller.abort("database lost");
  };

  // Stop requests count apart from the state: a worker already draining on its own (--once after its
  // job, local failures in a row) still drains on the first request and hands back only on the second.
  let stopRequests = 0;
  const stop = () => {
    if (state === "stopped" || state === "failed") return;
    stopRequests++;
    if (stopRequests === 1) {
      if (state === "running") move("draining");
      idle?.abort();
      emit({ kind: "draining", held: held.size });
      return;
    }
    if (handingBack) return;
    handingBack = true;
    emit({ kind: "handing_back" });
    for (const h of held.values()) h.controller.abort("SIGTERM");
  };

  /** Drives one claimed job to an outcome, heartbeating its claim every `beat` ms. */
  async function holdJob(claim: Claim, controller: AbortController): Promise<Outcome> {
    const { job, token } = claim;
    let lost: string | null = null;
    const keeper = keepLeaseAlive({
      everyMs: beat,
      renew: async () =>
        (await queue.heartbeat(job.jobId, token, o.leaseMs)) === null
          ? { held: false, why: "its lease expired before the heartbeat (another worker may hold it now)" }
          : HELD,
      // The database lost ends the whole worker (below), never retried here; any other error is retried.
      transient: (e) => !isStoreUnreachable(e),
      onLost: (loss) => {
        if (loss.kind === "failed" && isStoreUnreachable(loss.why)) return lose(loss.why);
        lost =
          loss.kind === "lost"
            ? String(loss.why)
            : `its lease could not be renewed (${loss.why instanceof Error ? loss.why.message : String(loss.why)})`;
        controller.abort("lease lost");
      },
    });
    try {
      const ctx: JobContext = {
        claim,
        queue,
        store: o.store,
        url: o.url,
        leaseMs: o.leaseMs,
        signal: controller.signal,
        note: (line) => emit({ kind: "note", line }),
        warn: (text) => emit({ kind: "warning", text }),
        workDir: o.workDir,
        kit: o.kit,
        faults: o.faults,
        now,
        sleep,
      };
      const goalId = goalOfJob(job);
      const work = goalId === null ? jobs.run(ctx) : jobs.goalTurn(ctx, goalId);
      const env = await work.catch((e: unknown) => {
        if (isStoreUnreachable(e)) lose(e);
        return e instanceof Error ? e : new Error(String(e));
      });
      if (lost) return { kind: "lost", why: lost };
      if (controller.signal.aborted) {
        if (handingBack && (await queue.release(job.jobId, token).catch(() => false)))
          return { kind: "handed-back" };
        return { kind: "lost", why: `interrupted (${String(controller.signal.reason)})` };
      }
      // This machine could not start it (its folder, the sandbox, a key it lacks): back to the queue,
      // unclaimed, with the reason; never finished, since another machine may run it.
      if (env instanceof LocalStartError) {
        const reason = env.message.slice(0, 500);
        if (await queue.handBack(job.jobId, token, reason).catch(() => false))
          return { kind: "local", reason };
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
      keeper.stop();
    }
  }

  async function run(): Promise<WorkerResult> {
    if (started) throw new Error(`worker ${o.id} was run already`);
    started = true;
    // Local start failures in a row (any job); a job that started, or was refused for its task, ends it.
    const stopAfter = o.once ? 1 : o.policy.localFailuresToStop;
    let localInRow = 0;
    // An idle worker wakes on the queue's NOTIFY and polls as the fallback (see queue-listener.ts).
    let listenerDown = false;
    const listener = QueueListener.start({
      url: o.url,
      pgSchema: o.store.pgSchema,
      policy: o.wakePolicy,
      onState: (st) => {
        if (st.state === "retrying" && !listenerDown) {
          listenerDown = true;
          emit({ kind: "listener_lost", error: String(st.lastError), pollMs: idlePollMs });
        } else if (st.state === "listening" && listenerDown) {
          listenerDown = false;
          emit({ kind: "listener_back" });
        }
      },
    });
    const presence = setInterval(() => {
      queue.announceWorker(me, o.leaseMs).catch(lose);
    }, beat);
    let claimedAny = false;
    try {
      await queue.announceWorker(me, o.leaseMs);
      emit({ kind: "claiming", label: o.label, concurrency: o.concurrency, leaseMs: o.leaseMs });
      for (;;) {
        if (fatal) break;
        if (state === "draining" || cannotWork || (o.once && claimedAny)) {
          if (state === "running") move("draining");
          if (held.size === 0) break;
          await Promise.race([...held.values()].map((h) => h.done));
          continue;
        }
        let claim: Claim | null = null;
        if (held.size < o.concurrency)
          claim = await queue
            .claim(o.id, o.leaseMs, {
              onDeadLetter: (j) => emit({ kind: "dead_letter", jobId: j.jobId, reason: j.deadReason ?? "" }),
            })
            .catch((e: unknown) => {
              lose(e);
              return null;
            });
        if (claim) {
          claimedAny = true;
          const c = claim;
          const controller = new AbortController();
          emit({ kind: "claimed", jobId: c.job.jobId, attempt: c.job.attempts, runId: c.job.runId });
          const done = holdJob(c, controller)
            .then((outcome) => {
              if (outcome.kind === "finished") {
                localInRow = 0;
                emit({ kind: "finished", jobId: c.job.jobId, status: outcome.status });
              } else if (outcome.kind === "handed-back") emit({ kind: "handed_back", jobId: c.job.jobId });
              else if (outcome.kind === "local") {
                localInRow++;
                emit({
                  kind: "local_failure",
                  jobId: c.job.jobId,
                  inRow: localInRow,
                  reason: outcome.reason,
                });
                if (localInRow >= stopAfter && !cannotWork)
                  cannotWork = `could not start ${localInRow} job(s) in a row on this machine; last reason: ${outcome.reason}`;
              } else emit({ kind: "gave_up", jobId: c.job.jobId, why: outcome.why });
            })
            .finally(() => held.delete(c.job.jobId));
          held.set(c.job.jobId, { claim: c, controller, done });
          continue;
        }
        if (o.once && held.size === 0) break;
        if (o.untilIdle && held.size === 0) {
          const left = await queue.unfinished().catch((e: unknown) => {
            lose(e);
            return -1;
          });
          if (left === 0) break;
        }
        // Idle (or full): a notification, the poll, or a held job ending, whichever is first. A stop
        // request (or the database lost) that came while this pass was claiming found no wait to end:
        // it is seen here, once the wait can be ended, so it never waits out a whole poll.
        idle = new AbortController();
        if (state === "running" && !fatal)
          await Promise.race([
            listener.wait(idlePollMs, idle.signal),
            ...[...held.values()].map((h) => h.done),
          ]);
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
      if (!fatal) await queue.retireWorker(o.id, pid).catch(() => {});
    }
    if (fatal) {
      move("failed");
      return { state: "failed", reason: "lost_database", message: fatal };
    }
    if (cannotWork) {
      move("failed");
      return { state: "failed", reason: "cannot_work", message: cannotWork };
    }
    move("stopped");
    return { state: "stopped" };
  }

  return {
    id: o.id,
    get state() {
      return state;
    },
    run,
    stop,
  };
}

/** The job kinds a worker runs unless given others: loaded when first needed. */
const defaultJobs: WorkerJobs = {
  run: async (ctx) => (await import("./run-job.js")).runJob(ctx),
  goalTurn: async (ctx, goalId) => (await import("./goal-turn-job.js")).runGoalTurnJob(ctx, goalId),
};
