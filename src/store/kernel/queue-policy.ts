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
  /**
   * A job whose claim was lost this many times (its holder's lease ran out: the worker was killed, ran out
   * of memory, lost its machine) is not handed out again: the claim that finds it expired the last time
   * finishes it as TOOL_FAILURE with the reason (a dead letter). A job that kills every worker that takes
   * it must not be retried forever. Polite hand-backs (release, a machine that cannot start it) do not count.
   */
  lostClaimsToDeadLetter: number;
}

/** The policy loopgate runs with. */
export const QUEUE_POLICY: QueuePolicy = {
  localFailuresToStop: 3,
  staleAfterBeats: 2,
  lostClaimsToDeadLetter: 3,
};

/** How an idle worker waits for work: woken by NOTIFY, polling as the fallback (queue-listener.ts). */
export interface WakePolicy {
  /**
   * The longest an idle worker waits before it claims again without a notification: what finds a lease
   * that ran out, a goal turn whose `not_before` came, and anything a lost notification did not announce.
   */
  idlePollMs: number;
  /** The first wait before the listening connection is opened again after an error; doubled per failure. */
  reconnectFirstMs: number;
  /** The longest wait between two attempts to open the listening connection again. */
  reconnectMaxMs: number;
}

/** The wake policy loopgate runs with. */
export const WAKE_POLICY: WakePolicy = { idlePollMs: 1000, reconnectFirstMs: 100, reconnectMaxMs: 5000 };
