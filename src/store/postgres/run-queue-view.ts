import { QUEUE_POLICY, type QueuePolicy } from "../kernel/queue-policy.js";
import { goalOfJob, type QueuedJob, type WorkerRow } from "./run-queue.js";

// How a queued job reads to people and scripts (`runs`, `status`, `workers`, `submit`); the one line people
// read of a job summary is the CLI's (cli/output/job-status.ts, jobLine).

/**
 * Where a job stands, as `runs`, `status` and `workers` show it, at `now` (the database's clock):
 * queued; claimed (a worker holds it, its run not started yet); running (a worker holds it and drives
 * its run); expired (its holder's lease ran out: the next worker to look claims it); finished.
 */
export type JobView = "queued" | "claimed" | "running" | "expired" | "finished";

/** The job's view at `now` (see JobView). */
export function jobView(job: QueuedJob, now: Date): JobView {
  if (job.state !== "claimed") return job.state;
  if (job.lockedUntil === null || Date.parse(job.lockedUntil) <= now.getTime()) return "expired";
  return job.runId === null ? "claimed" : "running";
}

/**
 * Whether a worker's heartbeat is overdue at `now`: its last one is older than `staleAfterBeats` of the
 * intervals it promised. Its presence and its jobs' leases may still run a while; this says it has gone
 * quiet. A worker that promised no interval (an older loopgate) is judged by its presence alone.
 */
export function workerStale(w: WorkerRow, now: Date, policy: QueuePolicy = QUEUE_POLICY): boolean {
  if (Date.parse(w.seenUntil) <= now.getTime()) return true;
  if (w.seenAt === null || w.beatMs === null) return false;
  return now.getTime() - Date.parse(w.seenAt) > policy.staleAfterBeats * w.beatMs;
}

/**
 * A job's queue state as `runs --json` and `status --json` print it; `staleWorkers` are the workers whose
 * heartbeat is overdue (a job one of them holds says so).
 */
export function jobSummary(job: QueuedJob, now: Date, staleWorkers: ReadonlySet<string> = new Set()) {
  const view = jobView(job, now);
  const held = view === "claimed" || view === "running" || view === "expired";
  const stale = held && view !== "expired" && job.claimedBy !== null && staleWorkers.has(job.claimedBy);
  return {
    job_id: job.jobId,
    kind: goalOfJob(job) === null ? ("run" as const) : ("goal_turn" as const),
    state: view,
    worker: held ? job.claimedBy : null,
    lease_expires_at: held ? job.lockedUntil : null,
    claims: job.attempts,
    run_id: job.runId,
    task_path: job.taskPath,
    submitted_at: job.submittedAt,
    ...(job.status !== null ? { status: job.status } : {}),
    ...(stale ? { worker_stale: true } : {}),
    ...(job.handedBack
      ? {
          handed_back: {
            times: job.handedBack.times,
            last_reason: job.handedBack.reason,
            last_worker: job.handedBack.by,
            last_at: job.handedBack.at,
          },
        }
      : {}),
    ...(job.lostClaims > 0 ? { lost_claims: job.lostClaims } : {}),
    ...(job.deadReason !== null ? { dead_letter: job.deadReason } : {}),
  };
}
export type JobSummary = ReturnType<typeof jobSummary>;
