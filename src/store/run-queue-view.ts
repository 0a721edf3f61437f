import type { QueuedJob } from "./run-queue.js";

// How a queued job reads to people and scripts (`runs`, `status`, `workers`, `submit`).

/**
 * Where a job stands, as `runs`, `status` and `workers` show it, at `now` (the database's clock):
 * queued; claimed (a worker holds it, its run not started yet); running (a worker holds it and drives
 * its run); expired (its holder's lease ran out: the next worker to look claims it); finished.
 */
export type JobView = "queued" | "claimed" | "running" | "expired" | "finished";

export function jobView(job: QueuedJob, now: Date): JobView {
  if (job.state !== "claimed") return job.state;
  if (job.lockedUntil === null || Date.parse(job.lockedUntil) <= now.getTime()) return "expired";
  return job.runId === null ? "claimed" : "running";
}

/** A job's queue state as `runs --json` and `status --json` print it. */
export function jobSummary(job: QueuedJob, now: Date) {
  const view = jobView(job, now);
  const held = view === "claimed" || view === "running" || view === "expired";
  return {
    job_id: job.jobId,
    state: view,
    worker: held ? job.claimedBy : null,
    lease_expires_at: held ? job.lockedUntil : null,
    claims: job.attempts,
    run_id: job.runId,
    task_path: job.taskPath,
    submitted_at: job.submittedAt,
    ...(job.status !== null ? { status: job.status } : {}),
  };
}
export type JobSummary = ReturnType<typeof jobSummary>;

/** One line for people: `running on w-1 (lease until …)`, `queued since …`. */
export function jobLine(j: JobSummary): string {
  switch (j.state) {
    case "queued":
      return `queued since ${j.submitted_at} (job ${j.job_id})`;
    case "claimed":
      return `claimed by ${j.worker}, run not started yet, lease until ${j.lease_expires_at} (job ${j.job_id})`;
    case "running":
      return `running on ${j.worker}, lease until ${j.lease_expires_at} (job ${j.job_id})`;
    case "expired":
      return `lease of ${j.worker} expired at ${j.lease_expires_at}; the next worker takes it over (job ${j.job_id})`;
    case "finished":
      return `finished: ${j.status ?? "?"} (job ${j.job_id}, ${j.claims} claim(s))`;
  }
}
