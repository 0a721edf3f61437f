import { randomBytes } from "node:crypto";
import type pg from "pg";
import { InputError } from "../../core/kernel/errors.js";
import { QUEUE_POLICY, type QueuePolicy } from "../kernel/queue-policy.js";
import {
  type Claim,
  GOAL_TURN_KIND,
  goalTurnPath,
  iso,
  JOB_COLUMNS,
  JobOptions,
  jobOf,
  type QueuedJob,
  type WorkerRow,
} from "./run-queue-rows.js";

/**
 * The run queue in PostgreSQL (migrations 3, 6 and 8): jobs that workers claim with `FOR UPDATE SKIP
 * LOCKED` and hold by a lease (`locked_until`, the database's clock) that they extend while they run.
 *
 * Every right is the claim's: a claim gets a fresh random token, and heartbeat, setRunId, finish, release
 * and handBack succeed only for that token while its lease is live (checked in the same UPDATE). A holder
 * whose lease expired has lost the job even when nobody took it yet; whoever claims it next gets a new
 * token. Delivery is at least once: a job may be claimed again after a holder died; the run log (event
 * ids, the intent/result journal, the run's own lease) is what keeps a resumed run from doing anything twice.
 * At least once, not forever: a job whose holder was lost `lostClaimsToDeadLetter` times (migration 8) is
 * finished as TOOL_FAILURE with the reason by the claim that finds it (see claim).
 *
 * Every write that makes a row claimable (submit, a goal turn queued or moved earlier, release, hand-back)
 * notifies idle claimers through a trigger (migration 7); see queue-listener.ts for how they wait.
 */

export {
  type Claim,
  GOAL_TURN_KIND,
  goalOfJob,
  type HandBack,
  JobOptions,
  type JobState,
  type QueuedJob,
  type WorkerRow,
} from "./run-queue-rows.js";

type WithClient = <T>(work: (client: pg.PoolClient) => Promise<T>) => Promise<T>;

const newJobId = () =>
  `job-${new Date()
    .toISOString()
    .replace(/[-:.TZ]/g, "")
    .slice(0, 14)}-${randomBytes(4).toString("hex")}`;

/**
 * Why the queue finished a job itself: the cap it reached, what that suggests and what to do. `{worker}`
 * (its last holder) and `{run}` (its run id) are filled in by the statement that dead-letters the row.
 */
export function deadLetterReason(cap: number): { noRun: string; withRun: string } {
  const lost = `its worker was lost ${cap} time(s) (the lease expired each time; last held by {worker}), the cap of lost claims (lostClaimsToDeadLetter ${cap}): the job may be killing its worker, so the queue gives it no further claim`;
  return {
    noRun: `${lost}; it had not started a run: find the cause, then submit the task again`,
    withRun: `${lost}; its run {run}, if it started, can be resumed by hand: loopgate resume {run} --store …`,
  };
}

/** Lease lengths are whole milliseconds from 100 ms to a day. */
function checkLeaseMs(ms: number): number {
  if (!Number.isInteger(ms) || ms < 100 || ms > 86_400_000)
    throw new InputError(`a lease must be 100 ms to 24 h, got ${ms} ms`, "run queue");
  return ms;
}

export class PostgresRunQueue {
  private readonly withClient: WithClient;
  private readonly s: string;

  private readonly policy: Pick<QueuePolicy, "lostClaimsToDeadLetter">;

  constructor(deps: {
    withClient: WithClient;
    pgSchema: string;
    policy?: Pick<QueuePolicy, "lostClaimsToDeadLetter">;
  }) {
    this.withClient = deps.withClient;
    this.s = deps.pgSchema;
    this.policy = deps.policy ?? QUEUE_POLICY;
    if (!Number.isInteger(this.policy.lostClaimsToDeadLetter) || this.policy.lostClaimsToDeadLetter < 1)
      throw new InputError(
        `lostClaimsToDeadLetter must be a whole number from 1, got ${this.policy.lostClaimsToDeadLetter}`,
        "run queue",
      );
  }

  private async query(sql: string, params: unknown[]): Promise<Record<string, unknown>[]> {
    return (await this.withClient((c) => c.query(sql, params))).rows;
  }

  /** Enqueues a run of the task at `taskPath` (its digest as submitted); returns the queued job. */
  async submit(job: { taskPath: string; taskDigest: string; options: JobOptions }): Promise<QueuedJob> {
    const options = JobOptions.parse(job.options);
    const jobId = newJobId();
    const rows = await this.query(
      `INSERT INTO ${this.s}.run_queue (job_id, task_path, task_digest, options, state)
       VALUES ($1, $2, $3, $4, 'queued') RETURNING ${JOB_COLUMNS}`,
      [jobId, job.taskPath, job.taskDigest, JSON.stringify(options)],
    );
    return jobOf(rows[0] as Record<string, unknown>);
  }

  /**
   * Enqueues the next turn of `goalId` at `notBefore` (null: now), one queued turn per goal: a turn already
   * queued is kept, moved earlier when `notBefore` is earlier (`host_updated`), else left as it is
   * (`host_match`). Enqueues of one goal are serialised by an advisory lock on its job path, so two never
   * both insert. A claimed turn (the caller's own) does not count: this is the scheduler's next wake-up.
   */
  async submitGoalTurn(
    goalId: string,
    options: JobOptions,
    notBefore: string | null,
  ): Promise<{ job: QueuedJob; mode: "host_match" | "host_updated" }> {
    if (notBefore !== null && Number.isNaN(Date.parse(notBefore)))
      throw new InputError(`not a time: ${JSON.stringify(notBefore)}`, "goal turn");
    const path = goalTurnPath(goalId);
    const base = JobOptions.parse({ ...options, job_kind: GOAL_TURN_KIND, goal_id: goalId });
    delete base.not_before;
    return this.withClient(async (c) => {
      await c.query("BEGIN");
      try {
        await c.query("SELECT pg_advisory_xact_lock(hashtext($1))", [path]);
        const held = await c.query(
          `SELECT ${JOB_COLUMNS} FROM ${this.s}.run_queue WHERE task_path = $1 AND state = 'queued'
           ORDER BY submitted_at, job_id LIMIT 1 FOR UPDATE`,
          [path],
        );
        let out: { job: QueuedJob; mode: "host_match" | "host_updated" };
        if (held.rows.length > 0) {
          const job = jobOf(held.rows[0] as Record<string, unknown>);
          const at = typeof job.options.not_before === "string" ? Date.parse(job.options.not_before) : null;
          const want = notBefore === null ? null : Date.parse(notBefore);
          const earlier = at !== null && (want === null || want < at);
          if (!earlier) out = { job, mode: "host_match" };
          else {
            const next = { ...job.options };
            if (notBefore === null) delete next.not_before;
            else next.not_before = notBefore;
            const rows = await c.query(
              `UPDATE ${this.s}.run_queue SET options = $2 WHERE job_id = $1 RETURNING ${JOB_COLUMNS}`,
              [job.jobId, JSON.stringify(next)],
            );
            out = { job: jobOf(rows.rows[0] as Record<string, unknown>), mode: "host_updated" };
          }
        } else {
          const opts = notBefore === null ? base : { ...base, not_before: notBefore };
          const rows = await c.query(
            `INSERT INTO ${this.s}.run_queue (job_id, task_path, task_digest, options, state)
             VALUES ($1, $2, $3, $4, 'queued') RETURNING ${JOB_COLUMNS}`,
            [newJobId(), path, GOAL_TURN_KIND, JSON.stringify(opts)],
          );
          out = { job: jobOf(rows.rows[0] as Record<string, unknown>), mode: "host_updated" };
        }
        await c.query("COMMIT");
        return out;
      } catch (e) {
        await c.query("ROLLBACK").catch(() => {});
        throw e;
      }
    });
  }

  /**
   * Claims the oldest job that is queued or whose holder's lease expired, in one statement: the inner
   * SELECT … FOR UPDATE SKIP LOCKED passes over rows another claim is locking right now (and re-checks
   * its WHERE on a row changed meanwhile), so two claimers never get the same job. Null when none is free.
   *
   * Taking over an expired lease counts a lost claim. A job whose lost claims would reach the cap
   * (`lostClaimsToDeadLetter`) is never handed out: the same statement finishes every such row it can lock
   * as TOOL_FAILURE with the reason (a dead letter), and the claim takes the next job. The claim's own
   * WHERE leaves those rows out, so no claimer gets one, whoever locks it first. `onDeadLetter` hears of
   * each job this claim finished so (the caller says so: reaching a cap is never silent).
   */
  async claim(
    workerId: string,
    leaseMs: number,
    options: { onDeadLetter?: (job: QueuedJob) => void } = {},
  ): Promise<Claim | null> {
    const token = randomBytes(16).toString("hex");
    const cap = this.policy.lostClaimsToDeadLetter;
    const reason = deadLetterReason(cap);
    const rows = await this.query(
      `WITH dead AS (
         UPDATE ${this.s}.run_queue SET state = 'finished', status = 'TOOL_FAILURE', finished_at = now(),
           lost_claims = lost_claims + 1,
           dead_reason = replace(replace(CASE WHEN run_id IS NULL THEN $5 ELSE $6 END,
             '{run}', coalesce(run_id, '')), '{worker}', claimed_by),
           lease_token = NULL, locked_until = NULL, claimed_by = NULL
         WHERE job_id IN (
           SELECT job_id FROM ${this.s}.run_queue
           WHERE state = 'claimed' AND locked_until <= now() AND lost_claims + 1 >= $4
           FOR UPDATE SKIP LOCKED)
         RETURNING ${JOB_COLUMNS}),
       taken AS (
         UPDATE ${this.s}.run_queue SET state = 'claimed', claimed_by = $1, lease_token = $2,
           locked_until = now() + make_interval(secs => $3::double precision / 1000),
           attempts = attempts + 1, claimed_at = now(),
           lost_claims = lost_claims + CASE WHEN state = 'claimed' THEN 1 ELSE 0 END
         WHERE job_id = (
           SELECT job_id FROM ${this.s}.run_queue
           WHERE (state = 'queued' AND (options::jsonb->>'not_before' IS NULL
                   OR (options::jsonb->>'not_before')::timestamptz <= now()))
              OR (state = 'claimed' AND locked_until <= now() AND lost_claims + 1 < $4)
           ORDER BY submitted_at, job_id LIMIT 1 FOR UPDATE SKIP LOCKED)
         RETURNING ${JOB_COLUMNS})
       SELECT true AS dead, * FROM dead UNION ALL SELECT false AS dead, * FROM taken`,
      [workerId, token, checkLeaseMs(leaseMs), cap, reason.noRun, reason.withRun],
    );
    for (const r of rows) if (r.dead === true) options.onDeadLetter?.(jobOf(r));
    const taken = rows.find((r) => r.dead !== true);
    if (!taken) return null;
    const job = jobOf(taken);
    return { job, token, lockedUntil: job.lockedUntil ?? "" };
  }

  /** Extends a live lease by `leaseMs` from now; null when the token no longer holds the job. */
  async heartbeat(jobId: string, token: string, leaseMs: number): Promise<string | null> {
    const rows = await this.query(
      `UPDATE ${this.s}.run_queue SET locked_until = now() + make_interval(secs => $3::double precision / 1000)
       WHERE job_id = $1 AND lease_token = $2 AND state = 'claimed' AND locked_until > now()
       RETURNING locked_until`,
      [jobId, token, checkLeaseMs(leaseMs)],
    );
    return rows.length ? iso(rows[0]?.locked_until) : null;
  }

  /** Records the run a job drives (once); false when the token no longer holds it or a run is recorded. */
  async setRunId(jobId: string, token: string, runId: string): Promise<boolean> {
    const rows = await this.query(
      `UPDATE ${this.s}.run_queue SET run_id = $3
       WHERE job_id = $1 AND lease_token = $2 AND state = 'claimed' AND locked_until > now() AND run_id IS NULL
       RETURNING job_id`,
      [jobId, token, runId],
    );
    return rows.length === 1;
  }

  /** Marks the job finished with the run's status; false (nothing changed) unless the token holds it live. */
  async finish(jobId: string, token: string, status: string): Promise<boolean> {
    const rows = await this.query(
      `UPDATE ${this.s}.run_queue SET state = 'finished', status = $3, finished_at = now(),
         lease_token = NULL, locked_until = NULL, claimed_by = NULL
       WHERE job_id = $1 AND lease_token = $2 AND state = 'claimed' AND locked_until > now()
       RETURNING job_id`,
      [jobId, token, status],
    );
    return rows.length === 1;
  }

  /** Hands a held job back to the queue (its run id stays, so the next claimer resumes it). */
  async release(jobId: string, token: string): Promise<boolean> {
    const rows = await this.query(
      `UPDATE ${this.s}.run_queue SET state = 'queued', lease_token = NULL, locked_until = NULL, claimed_by = NULL
       WHERE job_id = $1 AND lease_token = $2 AND state = 'claimed' AND locked_until > now()
       RETURNING job_id`,
      [jobId, token],
    );
    return rows.length === 1;
  }

  /**
   * Hands a held job back unclaimed because this worker cannot start it (its folder, its disk, a missing
   * tool, the sandbox): queued again with its run id kept, the reason and the worker recorded and counted.
   * Never finished: the job is not at fault. False (nothing changed) unless the token holds it live.
   */
  async handBack(jobId: string, token: string, reason: string): Promise<boolean> {
    const rows = await this.query(
      `UPDATE ${this.s}.run_queue SET state = 'queued', handbacks = handbacks + 1,
         handback_reason = $3, handback_by = claimed_by, handback_at = now(),
         lease_token = NULL, locked_until = NULL, claimed_by = NULL
       WHERE job_id = $1 AND lease_token = $2 AND state = 'claimed' AND locked_until > now()
       RETURNING job_id`,
      [jobId, token, reason.slice(0, 2000)],
    );
    return rows.length === 1;
  }

  /** Every job, oldest first (or only those not finished). */
  async list(options: { unfinished?: boolean } = {}): Promise<QueuedJob[]> {
    const rows = await this.query(
      `SELECT ${JOB_COLUMNS} FROM ${this.s}.run_queue ${options.unfinished ? "WHERE state <> 'finished'" : ""}
       ORDER BY submitted_at, job_id`,
      [],
    );
    return rows.map(jobOf);
  }

  /** The job `jobId`, or the job that drives run `runId`; null when there is none. */
  async find(key: { jobId: string } | { runId: string }): Promise<QueuedJob | null> {
    const [column, value] = "jobId" in key ? ["job_id", key.jobId] : ["run_id", key.runId];
    const rows = await this.query(
      `SELECT ${JOB_COLUMNS} FROM ${this.s}.run_queue WHERE ${column} = $1 ORDER BY submitted_at DESC LIMIT 1`,
      [value],
    );
    return rows.length ? jobOf(rows[0] as Record<string, unknown>) : null;
  }

  /** The database's clock, which every lease is measured by. */
  async now(): Promise<Date> {
    const rows = await this.query("SELECT now() AS now", []);
    return new Date(String(rows[0]?.now));
  }

  /** How many jobs are not finished (queued, or claimed live or expired). */
  async unfinished(): Promise<number> {
    const rows = await this.query(
      `SELECT count(*) AS n FROM ${this.s}.run_queue WHERE state <> 'finished'`,
      [],
    );
    return Number(rows[0]?.n ?? 0);
  }

  /**
   * Announces (or re-announces) a worker until `now + ttlMs`, promising its next heartbeat within
   * `beatMs`; refuses an id a live other process uses.
   */
  async announceWorker(
    w: { workerId: string; host: string; pid: number; concurrency: number; beatMs?: number },
    ttlMs: number,
  ): Promise<void> {
    const rows = await this.query(
      `INSERT INTO ${this.s}.workers (worker_id, host, pid, concurrency, seen_until, seen_at, beat_ms)
       VALUES ($1, $2, $3, $4, now() + make_interval(secs => $5::double precision / 1000), now(), $6)
       ON CONFLICT (worker_id) DO UPDATE SET host = EXCLUDED.host, pid = EXCLUDED.pid,
         concurrency = EXCLUDED.concurrency, seen_until = EXCLUDED.seen_until,
         seen_at = EXCLUDED.seen_at, beat_ms = EXCLUDED.beat_ms,
         started_at = CASE WHEN ${this.s}.workers.pid = EXCLUDED.pid AND ${this.s}.workers.host = EXCLUDED.host
                           THEN ${this.s}.workers.started_at ELSE now() END
       WHERE (${this.s}.workers.pid = EXCLUDED.pid AND ${this.s}.workers.host = EXCLUDED.host)
          OR ${this.s}.workers.seen_until <= now()
       RETURNING worker_id`,
      [w.workerId, w.host, w.pid, w.concurrency, checkLeaseMs(ttlMs), w.beatMs ?? null],
    );
    if (rows.length === 0)
      throw new InputError(
        `worker id ${JSON.stringify(w.workerId)} is in use by a live worker; give another --id or stop that one`,
        "--id",
      );
  }

  /** Removes a worker's row (a clean exit). */
  async retireWorker(workerId: string, pid: number): Promise<void> {
    await this.query(`DELETE FROM ${this.s}.workers WHERE worker_id = $1 AND pid = $2`, [workerId, pid]);
  }

  /** Workers whose presence has not run out (an overdue one: workerStale), with the jobs they hold live. */
  async liveWorkers(): Promise<{ worker: WorkerRow; holds: QueuedJob[] }[]> {
    const workers = await this.query(
      `SELECT worker_id, host, pid, concurrency, started_at, seen_until, seen_at, beat_ms FROM ${this.s}.workers
       WHERE seen_until > now() ORDER BY worker_id`,
      [],
    );
    const held = await this.query(
      `SELECT ${JOB_COLUMNS} FROM ${this.s}.run_queue WHERE state = 'claimed' AND locked_until > now()
       ORDER BY submitted_at, job_id`,
      [],
    );
    const jobs = held.map(jobOf);
    return workers.map((r) => ({
      worker: {
        workerId: String(r.worker_id),
        host: String(r.host),
        pid: Number(r.pid),
        concurrency: Number(r.concurrency),
        startedAt: iso(r.started_at) ?? "",
        seenUntil: iso(r.seen_until) ?? "",
        seenAt: iso(r.seen_at),
        beatMs: r.beat_ms === null || r.beat_ms === undefined ? null : Number(r.beat_ms),
      },
      holds: jobs.filter((j) => j.claimedBy === String(r.worker_id)),
    }));
  }
}
