import { z } from "zod";
import { LoopgateError } from "../../core/kernel/errors.js";

// The run queue's records: what a job, a claim, a hand-back and a worker are, and how a row becomes one.

/** The run options a job carries (the `loopgate run` flags, by name). */
export const JobOptions = z.record(
  z.string(),
  z.union([z.string(), z.number(), z.boolean(), z.array(z.string())]),
);
export type JobOptions = z.infer<typeof JobOptions>;

export type JobState = "queued" | "claimed" | "finished";

/**
 * A job is a run of a task, or one governed turn of a goal (job kind "goal turn"): its task_path is
 * `goal:<goal id>`, its options carry `job_kind: "goal_turn"`, `goal_id` and, for a wake-up later than
 * now, `not_before` (ISO; a claim passes over the job until then).
 */
export const GOAL_TURN_KIND = "goal_turn";
export const goalTurnPath = (goalId: string) => `goal:${goalId}`;

/** The goal a job advances by one turn, or null for a run. */
export function goalOfJob(job: QueuedJob): string | null {
  return job.options.job_kind === GOAL_TURN_KIND && typeof job.options.goal_id === "string"
    ? job.options.goal_id
    : null;
}

/** One row of the queue as read back. */
export interface QueuedJob {
  jobId: string;
  taskPath: string;
  taskDigest: string;
  options: JobOptions;
  state: JobState;
  claimedBy: string | null;
  lockedUntil: string | null;
  attempts: number;
  runId: string | null;
  status: string | null;
  submittedAt: string;
  /** Workers that could not start it for a reason of their own machine: how often, the last one and why. */
  handedBack: HandBack | null;
  /** Claims of it that were lost: another claim took it over after the holder's lease ran out. */
  lostClaims: number;
  /** Why the queue finished it itself (a dead letter: too many lost claims); null otherwise. */
  deadReason: string | null;
}

/** The hand-backs of a job: `times` in all, the last by `by` at `at` (the database's clock) for `reason`. */
export interface HandBack {
  times: number;
  reason: string;
  by: string;
  at: string;
}

/** A job this caller holds: `token` proves it, until `lockedUntil` unless renewed. */
export interface Claim {
  job: QueuedJob;
  token: string;
  lockedUntil: string;
}

/** A worker as it announced itself; `seenUntil` is when it counts as gone without a new heartbeat. */
export interface WorkerRow {
  workerId: string;
  host: string;
  pid: number;
  concurrency: number;
  startedAt: string;
  seenUntil: string;
  /** Its last heartbeat and the interval it promised between two (null: a worker that did not say). */
  seenAt: string | null;
  beatMs: number | null;
}

export const JOB_COLUMNS = `job_id, task_path, task_digest, options, state, claimed_by, locked_until, attempts,
  run_id, status, submitted_at, handbacks, handback_reason, handback_by, handback_at, lost_claims, dead_reason`;

export const iso = (v: unknown): string | null =>
  v === null || v === undefined ? null : new Date(String(v)).toISOString();

export function jobOf(r: Record<string, unknown>): QueuedJob {
  const options = JobOptions.safeParse(JSON.parse(String(r.options)));
  if (!options.success)
    throw new LoopgateError(
      "store_corrupt",
      `run_queue job ${String(r.job_id)}: options are not valid: ${options.error.message}`,
    );
  return {
    jobId: String(r.job_id),
    taskPath: String(r.task_path),
    taskDigest: String(r.task_digest),
    options: options.data,
    state: r.state as JobState,
    claimedBy: r.claimed_by === null ? null : String(r.claimed_by),
    lockedUntil: iso(r.locked_until),
    attempts: Number(r.attempts),
    runId: r.run_id === null ? null : String(r.run_id),
    status: r.status === null ? null : String(r.status),
    submittedAt: iso(r.submitted_at) ?? "",
    handedBack:
      Number(r.handbacks) > 0
        ? {
            times: Number(r.handbacks),
            reason: String(r.handback_reason ?? ""),
            by: String(r.handback_by ?? ""),
            at: iso(r.handback_at) ?? "",
          }
        : null,
    lostClaims: Number(r.lost_claims ?? 0),
    deadReason: r.dead_reason === null || r.dead_reason === undefined ? null : String(r.dead_reason),
  };
}
