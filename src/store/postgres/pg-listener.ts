import pg from "pg";
import { pgConnectionString } from "../kernel/pg-url.js";
import { WAKE_POLICY, type WakePolicy } from "../kernel/queue-policy.js";

/** Where the listening connection is: opening, listening, waiting to open again after an error, closed. */
export type ListenerState = "connecting" | "listening" | "retrying" | "closed";

/** Why a wait ended: a notification (or a reconnect, which counts as one), the time ran out, the caller aborted. */
export type WakeReason = "notified" | "timeout" | "aborted";

/** What a listener did so far, for logs and tests. */
export interface ListenerStats {
  state: ListenerState;
  /** Notifications accepted (on the channel, for this listener's schema). */
  notifications: number;
  /** Times the LISTEN was (re)established; more than 1 means the connection was lost and opened again. */
  listens: number;
  /** Consecutive failures to open the connection since the last LISTEN. */
  failures: number;
  lastError: string | null;
}

/** What a listener listens to, and what it counts as its own. */
export interface ChannelSpec {
  /** The NOTIFY channel (an identifier the code chose, never user input). */
  channel: string;
  /** The connection's application_name: how an operator (or a test) finds it in pg_stat_activity. */
  applicationName: string;
  /** Whether a payload on the channel is one for this listener (the same database holds other schemas). */
  accepts(payload: string): boolean;
}

/** How to reach the database and how to react to a lost connection. */
export interface ListenerOptions {
  /** The store's postgres:// URL. */
  url: string;
  policy?: WakePolicy;
  /** Called on every change of state (connecting, listening, retrying, closed), with the counters. */
  onState?: (stats: ListenerStats) => void;
}

/**
 * A doorbell on one NOTIFY channel: one dedicated connection (outside the store's pool, which must stay
 * free for claims, appends and reads) that LISTENs, and `wait(ms)`, which returns as soon as an accepted
 * notification arrives, else after `ms` (the poll that stays as the fallback).
 *
 * A notification is never the only way to what it announces: it only shortens a wait, and the caller reads
 * after every wait, whatever ended it. Notifications that arrive while nobody waits are remembered (one
 * pending flag), so what is announced between a read and the next wait is not slept through. A lost
 * connection is opened again with a doubling, jittered, bounded backoff; every (re)established LISTEN
 * counts as a notification, since what happened while nobody listened was announced to no one.
 */
export class PgListener {
  private readonly url: string;
  private readonly spec: ChannelSpec;
  private readonly policy: WakePolicy;
  private readonly onState: ((stats: ListenerStats) => void) | undefined;
  private client: pg.Client | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private pending = false;
  private readonly waiters = new Set<() => void>();
  private readonly firstListen: Promise<void>;
  private listened: () => void = () => {};
  private readonly stats: ListenerStats = {
    state: "connecting",
    notifications: 0,
    listens: 0,
    failures: 0,
    lastError: null,
  };

  /** Does not connect: `open()` starts listening (the subclasses' `start` calls both). */
  protected constructor(spec: ChannelSpec, options: ListenerOptions) {
    this.url = pgConnectionString(options.url);
    this.spec = spec;
    this.policy = options.policy ?? WAKE_POLICY;
    this.onState = options.onState;
    this.firstListen = new Promise((resolve) => {
      this.listened = resolve;
    });
  }

  /** Starts listening in the background (a connection failure is retried, never thrown). */
  protected open(): void {
    void this.connect();
  }

  /** The channel listened to. */
  get channel(): string {
    return this.spec.channel;
  }

  /** Resolves once the first LISTEN is in place (tests; a caller does not need to wait for it). */
  listening(): Promise<void> {
    return this.firstListen;
  }

  /** A copy of the listener's counters and state. */
  snapshot(): ListenerStats {
    return { ...this.stats };
  }

  /**
   * Waits until an accepted notification (or one that arrived since the last wait), `ms`, or `signal`,
   * whichever is first. Never throws.
   */
  wait(ms: number, signal?: AbortSignal): Promise<WakeReason> {
    if (this.pending) {
      this.pending = false;
      return Promise.resolve("notified");
    }
    if (signal?.aborted || this.stats.state === "closed") return Promise.resolve("aborted");
    return new Promise((resolve) => {
      const done = (reason: WakeReason) => {
        clearTimeout(timer);
        this.waiters.delete(wake);
        signal?.removeEventListener("abort", abort);
        resolve(reason);
      };
      const wake = () => done("notified");
      const abort = () => done("aborted");
      const timer = setTimeout(() => done("timeout"), Math.max(0, ms));
      this.waiters.add(wake);
      signal?.addEventListener("abort", abort, { once: true });
    });
  }

  /** Stops listening and ends the connection; pending and later waits return "aborted". */
  async close(): Promise<void> {
    if (this.stats.state === "closed") return;
    this.setState("closed");
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    for (const wake of [...this.waiters]) wake();
    const client = this.client;
    this.client = null;
    if (client) await client.end().catch(() => {});
  }

  private ring(): void {
    if (this.waiters.size === 0) {
      this.pending = true;
      return;
    }
    for (const wake of [...this.waiters]) wake();
  }

  private setState(state: ListenerState, error?: unknown): void {
    this.stats.state = state;
    if (error !== undefined) this.stats.lastError = error instanceof Error ? error.message : String(error);
    this.onState?.(this.snapshot());
  }

  private async connect(): Promise<void> {
    if (this.stats.state === "closed") return;
    this.setState("connecting");
    const client = new pg.Client({
      connectionString: this.url,
      application_name: this.spec.applicationName,
      connectionTimeoutMillis: 10_000,
      keepAlive: true,
    });
    this.client = client;
    let failed = false;
    const fail = (error: unknown) => {
      if (failed || this.client !== client) return;
      failed = true;
      this.client = null;
      client.end().catch(() => {});
      this.retry(error);
    };
    client.on("error", fail);
    client.on("end", () => fail(new Error("the listening connection ended")));
    client.on("notification", (m) => {
      if (m.channel !== this.spec.channel || !this.spec.accepts(m.payload ?? "")) return;
      this.stats.notifications++;
      this.ring();
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${this.spec.channel}`);
    } catch (error) {
      fail(error);
      return;
    }
    if (failed || this.client !== client) return;
    this.stats.failures = 0;
    this.stats.listens++;
    this.setState("listening");
    this.listened();
    // Whatever happened while nobody listened was announced to no one: the caller reads once now.
    this.ring();
  }

  private retry(error: unknown): void {
    if (this.stats.state === "closed") return;
    this.stats.failures++;
    this.setState("retrying", error);
    const { reconnectFirstMs: first, reconnectMaxMs: max } = this.policy;
    const ceiling = Math.min(max, first * 2 ** Math.min(this.stats.failures - 1, 20));
    // Jitter in the upper half, so listeners that lost one server do not all come back at once.
    const delay = Math.ceil(ceiling * (0.5 + Math.random() / 2));
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.connect();
    }, delay);
    this.retryTimer.unref();
  }
}
