import type { EventStore } from "../store/kernel/event-store.js";

/** A change of the log: its new last position and the streams appended to (`*`: any, not known which). */
export interface LogChange {
  position: number;
  streams: string[];
}

/** How often the log's position is read, and how many events one read takes at most. */
export const LIVE_POLICY = { pollMs: 500, batch: 1000 };

/**
 * Follows the log's global position for the board's live pages, on either store the same way: every
 * LIVE_POLICY.pollMs it reads the events appended since the last position it saw (ReadAll from there) and
 * tells each listener which streams moved. PostgreSQL's only NOTIFY channel announces the run queue's
 * claimable jobs, not appends to the log, so position polling is what follows the log there too.
 */
export class LogWatcher {
  private last = -1;
  private timer: NodeJS.Timeout | null = null;
  private reading: Promise<void> | null = null;
  private readonly listeners = new Set<(c: LogChange) => void>();

  constructor(
    private readonly store: EventStore,
    private readonly policy = LIVE_POLICY,
  ) {}

  /** The last position seen (−1 for an empty log). */
  get position(): number {
    return this.last;
  }

  /** Finds the log's end, then polls. */
  async start(): Promise<void> {
    this.last = await lastPosition(this.store);
    this.timer = setInterval(() => void this.poll(), this.policy.pollMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.listeners.clear();
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
