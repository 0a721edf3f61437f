// The queue's policy values, as data: the worker and the views read them here, never as literals.

/** How a worker and the views of the queue judge failures and silence. */
export interface QueuePolicy {
  /**
   * A worker that could not start this many jobs in a row for reasons of its own machine stops (exit 1)
   * naming the last reason: one bad machine in a pool must not keep claiming, and failing, every job.
   */
  localFailuresToStop: number;
  /**
   * A worker whose last heartbeat is older than this many of its own heartbeat intervals has missed one
   * entirely: `workers` and `runs` mark it stale while its presence and its jobs' leases still run.
   */
  staleAfterBeats: number;
}

/** The policy loopgate runs with. */
export const QUEUE_POLICY: QueuePolicy = { localFailuresToStop: 3, staleAfterBeats: 2 };
