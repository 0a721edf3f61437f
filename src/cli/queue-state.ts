import type { EventStore } from "../store/event-store.js";
import { PostgresEventStore } from "../store/postgres-event-store.js";
import { type JobSummary, jobSummary } from "../store/run-queue-view.js";

/**
 * The run queue's jobs as `runs` and `status` show them, when the store has a queue (PostgreSQL):
 * each job's summary (jobSummary: queued / claimed / running / expired / finished, the worker, the
 * lease's expiry by the database's clock), by job id and by run id. Null for a store without a queue.
 */
export async function queueState(
  store: EventStore,
): Promise<{ jobs: JobSummary[]; byRun: Map<string, JobSummary> } | null> {
  if (!(store instanceof PostgresEventStore)) return null;
  const queue = store.queue();
  const [jobs, now] = await Promise.all([queue.list(), queue.now()]);
  const summaries = jobs.map((j) => jobSummary(j, now));
  const byRun = new Map<string, JobSummary>();
  for (const j of summaries) if (j.run_id !== null) byRun.set(j.run_id, j);
  return { jobs: summaries, byRun };
}

/** One job by id or by the run it drives (PostgreSQL only); null when there is none. */
export async function queuedJob(
  store: EventStore,
  key: { jobId: string } | { runId: string },
): Promise<JobSummary | null> {
  if (!(store instanceof PostgresEventStore)) return null;
  const queue = store.queue();
  const [job, now] = await Promise.all([queue.find(key), queue.now()]);
  return job ? jobSummary(job, now) : null;
}
