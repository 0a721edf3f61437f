import type { EventStore } from "../store/kernel/event-store.js";
import { WAKE_POLICY, type WakePolicy } from "../store/kernel/queue-policy.js";
import { asPostgresStore, postgresRoom } from "../store/open-store.js";
import type { LogListener } from "../store/postgres/log-listener.js";
import type { ListenerStats } from "../store/postgres/pg-listener.js";

/** A change of the log: its new last position and the streams appended to (`*`: any, not known which). */
export interface LogChange {
  position: number;
  streams: string[];
}

/** How the board follows the log: its poll intervals, the size of one read, the listener's reconnects. */
export interface LivePolicy {
  /** Between two reads when nothing announces appends: SQLite, or PostgreSQL while its listener is lost. */
  pollMs: number;
  /** Between two reads while PostgreSQL's notifications arrive: only a safety net then. */
  listeningPollMs: number;
  /** The most events one read takes. */
  batch: number;
  /** How the listening connection is opened again after an error (its idle poll is not used here). */
  reconnect: WakePolicy;
}

/** The policy the board runs with. */
export const LIVE_POLICY: LivePolicy = {
  pollMs: 500,
  listeningPollMs: 15_000,
  batch: 1000,
  reconnect: WAKE_POLICY,
};

/** What the watcher is given besides the store. */
export interface LiveOptions {
  policy?: LivePolicy;
  /** Where a change of how the log is followed is said (a line ending in a newline); the server's stderr. */
  notice?: (line: string) => void;
}

/** How the log is followed now: woken by PostgreSQL's notifications, or by reading it every pollMs. */
export type Following = "notifications" | "polling";

/**
 * Follows the log's global position for the board's live pages: after each wake it reads the events
 * appended since the last position it saw (ReadAll from there) and tells each listener which streams moved.
 * On SQLite a wake is every LIVE_POLICY.pollMs. On PostgreSQL (schema 9 on) the events table's trigger
 * NOTIFYs `loopgate_events` on every append and a LogListener wakes the watcher at once; the poll stays as
 * the fallback, every listeningPollMs while the listener is healthy and every pollMs while it is lost (said
 * on the server's stderr both ways). A notification is only a wake-up: what a page shows always comes from
 * the read, so a lost notification costs one fallback interval, never an event.
 */
export class LogWatcher {
  private last = -1;
  private reading: Promise<void> | null = null;
  private readonly listeners = new Set<(c: LogChange) => void>();
  private readonly policy: LivePolicy;
  private readonly notice: (line: string) => void;
  private listener: LogListener | null = null;
  private stopped = false;
  private looping: Promise<void> | null = null;
  /** Ends the current wait early: a change of the listener's state changes the interval. */
  private interrupt = new AbortController();

  constructor(
    private readonly store: EventStore,
    options: LiveOptions = {},
  ) {
    this.policy = options.policy ?? LIVE_POLICY;
    this.notice = options.notice ?? ((line) => void process.stderr.write(line));
  }

  /** The last position seen (−1 for an empty log). */
  get position(): number {
    return this.last;
  }

  /** Whether notifications wake the watcher now, or only its poll. */
  get following(): Following {
    return this.listener?.snapshot().state === "listening" ? "notifications" : "polling";
  }

  /** The listener's counters and state on PostgreSQL; null when the log is followed by polling alone. */
  listenerStats(): ListenerStats | null {
    return this.listener?.snapshot() ?? null;
  }

  /** Finds the log's end, starts listening on PostgreSQL, then follows the log until `stop`. */
  async start(): Promise<void> {
    this.last = await lastPosition(this.store);
    const listener = await this.listen();
    if (this.stopped) {
      await listener?.close();
      return;
    }
    this.listener = listener;
    this.looping = this.follow();
  }

  /** Stops following and listening; resolves once the listening connection is closed. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.listeners.clear();
    this.interrupt.abort();
    const listener = this.listener;
    this.listener = null;
    await listener?.close();
    await this.looping;
  }

  /** Calls `fn` on every change from now on; returns the function that stops it. */
  subscribe(fn: (c: LogChange) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /**
   * Reads what was appended since the last position and tells the listeners when something was. A call
   * made while a read is under way waits for it and reads again, so on return the position is at least the
   * log's end as of the call (a page rendered after it names a position that covers what it shows).
   */
  async poll(): Promise<void> {
    while (this.reading) await this.reading;
    this.reading = this.read();
    try {
      await this.reading;
    } finally {
      this.reading = null;
    }
  }

  private async read(): Promise<void> {
    try {
      const streams = new Set<string>();
      for (;;) {
        const events = await this.store.readAll({ fromPosition: this.last + 1, limit: this.policy.batch });
        for (const e of events) {
          streams.add(e.stream);
          if (e.position > this.last) this.last = e.position;
        }
        if (events.length < this.policy.batch) break;
      }
      if (streams.size) for (const fn of this.listeners) fn({ position: this.last, streams: [...streams] });
    } catch {
      // A failed read (the database restarting) is tried again at the next poll; the pages keep what they show.
    }
  }

  private async follow(): Promise<void> {
    while (!this.stopped) {
      this.interrupt = new AbortController();
      const listener = this.listener;
      if (listener?.snapshot().state === "listening")
        await listener.wait(this.policy.listeningPollMs, this.interrupt.signal);
      else await pause(this.policy.pollMs, this.interrupt.signal);
      if (this.stopped) return;
      await this.poll();
    }
  }

  /** A LogListener when the store is PostgreSQL at a schema whose appends notify; else null (polling only). */
  private async listen(): Promise<LogListener | null> {
    const pgStore = asPostgresStore(this.store);
    if (!pgStore) return null;
    const room = await postgresRoom();
    const version = await pgStore.version();
    if (version < room.LOG_NOTIFY_VERSION) {
      this.notice(
        `live updates: the store's schema is version ${version}, older than ${room.LOG_NOTIFY_VERSION} (the first whose appends notify), so the log is read every ${this.policy.pollMs} ms; any loopgate command that writes to the store migrates it\n`,
      );
      return null;
    }
    let lost = false;
    return room.LogListener.start({
      url: pgStore.target.url,
      pgSchema: pgStore.pgSchema,
      policy: this.policy.reconnect,
      onState: (st) => {
        if (st.state === "retrying" && !lost) {
          lost = true;
          this.notice(
            `live updates: lost PostgreSQL's notifications (${st.lastError ?? "no error given"}); reading the log every ${this.policy.pollMs} ms until the listener is back\n`,
          );
        } else if (st.state === "listening" && lost) {
          lost = false;
          this.notice(
            `live updates: PostgreSQL's notifications are back; reading the log every ${this.policy.listeningPollMs} ms only as a fallback\n`,
          );
        }
        // The interval depends on the state: the wait under way is ended and the next one chosen anew.
        this.interrupt.abort();
      },
    });
  }
}

/** Resolves after `ms` or when `signal` aborts, whichever is first; never keeps the process alive. */
function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    timer.unref();
    signal.addEventListener("abort", done, { once: true });
  });
}

/**
 * The log's last position, found without reading the log: whether an event at or after position p exists
 * is true up to the last position and false past it, so a doubling probe and a binary search find it in
 * about 2·log2(positions) one-row reads. −1 for an empty log.
 */
export async function lastPosition(store: EventStore): Promise<number> {
  const at = async (p: number) => (await store.readAll({ fromPosition: p, limit: 1 }))[0]?.position ?? null;
  const first = await at(0);
  if (first === null) return -1;
  let low = first; // an event exists at or after `low`
  let step = 1;
  while ((await at(low + step)) !== null) {
    low += step;
    step *= 2;
  }
  let high = low + step; // nothing at or after `high`
  while (high - low > 1) {
    const mid = Math.floor((low + high) / 2);
    if ((await at(mid)) !== null) low = mid;
    else high = mid;
  }
  return (await at(low)) ?? low;
}
