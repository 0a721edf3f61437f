import { z } from "zod";
import type { WakePolicy } from "../kernel/queue-policy.js";
import { type ListenerStats, PgListener } from "./pg-listener.js";
import { LOG_CHANNEL } from "./pg-schema.js";

/** What one append announces on LOG_CHANNEL (migration 9): its schema, its stream (null: several or too long), its last position. */
export const AppendNotice = z.object({
  schema: z.string(),
  stream: z.string().nullable(),
  position: z.number().int().positive(),
});
export type AppendNotice = z.infer<typeof AppendNotice>;

/** The payload as an AppendNotice, or null when it is not one (a notification by something else on the channel). */
export function parseAppendNotice(payload: string): AppendNotice | null {
  try {
    const parsed = AppendNotice.safeParse(JSON.parse(payload));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/**
 * The log's doorbell: a PgListener (pg-listener.ts) on LOG_CHANNEL that accepts the appends to its own
 * schema. It only says that the log moved; the reader reads from its last position after every wait
 * (src/serve/live-feed.ts), so a lost or folded notification costs at most one fallback interval.
 */
export class LogListener extends PgListener {
  private announced = 0;

  /** Starts listening in the background (a connection failure is retried, never thrown). */
  static start(options: LogListenerOptions): LogListener {
    const { pgSchema, ...rest } = options;
    const listener: LogListener = new LogListener(
      {
        channel: LOG_CHANNEL,
        applicationName: "loopgate-log-listener",
        accepts: (payload) => {
          const notice = parseAppendNotice(payload);
          if (notice?.schema !== pgSchema) return false;
          listener.announced = Math.max(listener.announced, notice.position);
          return true;
        },
      },
      rest,
    );
    listener.open();
    return listener;
  }

  /** The highest position a notification announced so far (0: none yet). */
  get lastAnnounced(): number {
    return this.announced;
  }
}

/** Options for `LogListener.start`. */
export interface LogListenerOptions {
  /** The store's postgres:// URL. */
  url: string;
  /** The log's schema: appends to other schemas in the same database are ignored. */
  pgSchema: string;
  policy?: WakePolicy;
  /** Called on every change of state (connecting, listening, retrying, closed), with the counters. */
  onState?: (stats: ListenerStats) => void;
}
