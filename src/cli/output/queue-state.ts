import type { EventStore } from "../../store/kernel/event-store.js";
import {
  asPostgresStore,
  type JobSummary,
  type PostgresRunQueue,
  postgresRoom,
} from "../../store/open-store.js";

/**
 * The run queue's jobs as `runs` and `status` show them, when the store has a queue (PostgreSQL):
 * each job's summary (jobSummary: queued / claimed / running / expired / finished, the worker and
 * whether its heartbeat is overdue, the lease's expiry by the database's clock, its hand-backs), by job
 * id and by run id. Null for a store without a queue.
 */
export async function queueState(
  store: EventStore,
): Promise<{ jobs: JobSummary[]; byRun: Map<string, JobSummary> } | null> {
  const pgStore = asPostgresStore(store);
  if (!pgStore) return null;
  const { jobSummary } = await postgresRoom();
  const queue = pgStore.queue();
  const [jobs, { now, stale }] = await Promise.all([queue.list(), staleWorkers(queue)]);
  const summaries = jobs.map((j) => jobSummary(j, now, stale));
  const byRun = new Map<string, JobSummary>();
  for (const j of summaries) if (j.run_id !== null) byRun.set(j.run_id, j);
  return { jobs: summaries, byRun };
}

/** One job by id or by the run it drives (PostgreSQL only); null when there is none. */
export async function queuedJob(
  store: EventStore,
  key: { jobId: string } | { runId: string },
): Promise<JobSummary | null> {
  const pgStore = asPostgresStore(store);
  if (!pgStore) return null;
  const { jobSummary } = await postgresRoom();
  const queue = pgStore.queue();
  const [job, { now, stale }] = await Promise.all([queue.find(key), staleWorkers(queue)]);
  return job ? jobSummary(job, now, stale) : null;
}

/** The database's clock, and the ids of the workers whose heartbeat is overdue by it. */
async function staleWorkers(queue: PostgresRunQueue): Promise<{ now: Date; stale: Set<string> }> {
  const { workerStale } = await postgresRoom();
  const [live, now] = await Promise.all([queue.liveWorkers(), queue.now()]);
  return {
    now,
    stale: new Set(live.filter((l) => workerStale(l.worker, now)).map((l) => l.worker.workerId)),
  };
}
