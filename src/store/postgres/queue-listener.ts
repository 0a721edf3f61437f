import type { WakePolicy } from "../kernel/queue-policy.js";
import { type ListenerStats, PgListener } from "./pg-listener.js";

/** The channel the run queue's trigger notifies (migration 7); the payload is the queue's schema. */
export const QUEUE_CHANNEL = "loopgate_run_queue";

/**
 * An idle worker's doorbell: a PgListener (pg-listener.ts) on the run queue's channel that accepts the
 * notifications of its own schema. The worker claims after every wait, whatever ended it; what no write
 * announces (a lease that runs out, a `not_before` that comes due) its idle poll finds.
 */
export class QueueListener extends PgListener {
  /** Starts listening in the background (a connection failure is retried, never thrown). */
  static start(options: QueueListenerOptions): QueueListener {
    const { pgSchema, ...rest } = options;
    const listener = new QueueListener(
      {
        channel: QUEUE_CHANNEL,
        applicationName: "loopgate-queue-listener",
        accepts: (payload) => payload === pgSchema,
      },
      rest,
    );
    listener.open();
    return listener;
  }
}

/** Options for `QueueListener.start`. */
export interface QueueListenerOptions {
  /** The store's postgres:// URL. */
  url: string;
  /** The queue's schema: notifications for other schemas in the same database are ignored. */
  pgSchema: string;
  policy?: WakePolicy;
  /** Called on every change of state (connecting, listening, retrying, closed), with the counters. */
  onState?: (stats: ListenerStats) => void;
}
