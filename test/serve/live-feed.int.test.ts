import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { LoopgateEvent } from "../../src/core/events/loopgate-event.js";
import {
  LIVE_POLICY,
  type LivePolicy,
  type LogChange,
  LogWatcher,
  lastPosition,
} from "../../src/serve/live-feed.js";
import type { EventStore } from "../../src/store/kernel/event-store.js";
import { postgresRoom } from "../../src/store/open-store.js";
import { PostgresEventStore } from "../../src/store/postgres/postgres-event-store.js";
import { SqliteEventStore } from "../../src/store/sqlite/sqlite-event-store.js";
import { type FreshDatabase, freshDatabase, freshSchema } from "../support/postgres.js";
import { attempt, pristine, started } from "../support/run-events.js";

// The board's live feed: it follows the log's position on both stores; on PostgreSQL appends wake it through
// NOTIFY (migration 9), with the poll as the fallback, shorter while the listener is lost.
const temps: string[] = [];
let db: FreshDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(async () => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
  await db?.drop();
});

const stored = (bodies: { type: string; data: unknown }[]): LoopgateEvent[] =>
  bodies.map(
    (b) =>
      ({
        ...b,
        id: randomUUID(),
        meta: { at: new Date().toISOString(), origin: "runtime" },
      }) as LoopgateEvent,
  );
const run = () => stored([started(["g"]), pristine(), attempt(1)]);
/** The last position by reading the whole log: the rule lastPosition must agree with. */
const readToEnd = async (s: EventStore) => (await s.readAll()).reduce((m, e) => Math.max(m, e.position), -1);

const stores: [string, () => Promise<EventStore>][] = [
  [
    "sqlite",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "loopgate-live-"));
      temps.push(dir);
      return SqliteEventStore.open(join(dir, "events.db"));
    },
  ],
  ["postgres", () => PostgresEventStore.open(db.url, { pgSchema: freshSchema(), maxConnections: 2 })],
];

for (const [name, open] of stores)
  describe(`the live feed on ${name}`, () => {
    it("finds the log's last position without reading the log: -1 when empty, then the last append's", async () => {
      const store = await open();
      try {
        expect(await lastPosition(store)).toBe(-1);
        for (let i = 0; i < 37; i++) {
          await store.append(`run-${i}`, run(), "no_stream");
          expect(await lastPosition(store)).toBe(await readToEnd(store));
        }
      } finally {
        await store.close();
      }
    });

    it("tells its listeners which streams moved and the new position, never the same change twice", async () => {
      const store = await open();
      // Poll intervals no test waits for: each read is called by the test itself (on PostgreSQL a
      // notification may also wake a read, so the changes are checked as a whole, not counted).
      const watcher = new LogWatcher(store, { policy: idle({ batch: 2 }), notice: () => {} });
      try {
        await store.append("run-before", run(), "no_stream");
        await watcher.start();
        expect(watcher.position).toBe(await readToEnd(store));
        const seen: LogChange[] = [];
        watcher.subscribe((c) => seen.push(c));
        await watcher.poll();
        expect(seen).toEqual([]);
        await store.append("run-a", run(), "no_stream");
        await store.append("run-b", run(), "no_stream");
        await store.append("run-c", run(), "no_stream");
        await watcher.poll();
        expect(seen.at(-1)?.position).toBe(await readToEnd(store));
        expect(new Set(seen.flatMap((c) => c.streams))).toEqual(new Set(["run-a", "run-b", "run-c"]));
        const positions = seen.map((c) => c.position);
        expect(positions).toEqual([...new Set(positions)].sort((a, b) => a - b));
        const told = seen.length;
        await watcher.poll();
        expect(seen).toHaveLength(told);
      } finally {
        await watcher.stop();
        await store.close();
      }
    });
  });

/** A policy whose polls never come within a test, with `over` on top. */
const idle = (over: Partial<LivePolicy> = {}): LivePolicy => ({
  ...LIVE_POLICY,
  pollMs: 3_600_000,
  listeningPollMs: 3_600_000,
  ...over,
});

/**
 * A bound no load reaches for a wake that does not wait for a poll: the tests that await it set every poll
 * they do not test to 60 s or more, so a change seen within it was not found by one of those.
 */
const WAKE_BOUND_MS = 20_000;

/** Resolves with the first change that names `stream`; rejects after WAKE_BOUND_MS. */
function changeOf(watcher: LogWatcher, stream: string): Promise<LogChange> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      off();
      reject(new Error(`no change naming ${stream} within ${WAKE_BOUND_MS} ms`));
    }, WAKE_BOUND_MS);
    const off = watcher.subscribe((c) => {
      if (!c.streams.includes(stream)) return;
      clearTimeout(timer);
      off();
      resolve(c);
    });
  });
}

/** Appends a run to `stream` and returns the change the watcher told. */
async function appendAndSee(store: EventStore, watcher: LogWatcher, stream: string): Promise<LogChange> {
  const seen = changeOf(watcher, stream);
  await store.append(stream, run(), "no_stream");
  return seen;
}

/** Ends the board's listening connections in this file's database, as a restart or a network cut would. */
async function cutListeners(): Promise<number> {
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  try {
    const r = await c.query(
      `SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity
       WHERE datname = current_database() AND application_name = 'loopgate-log-listener'`,
    );
    return Number(r.rows[0]?.n ?? 0);
  } finally {
    await c.end();
  }
}

describe("the live feed on SQLite", () => {
  it("reads the log every pollMs, with no listener and nothing said", async () => {
    const [, open] = stores[0] ?? [];
    if (!open) throw new Error("no sqlite store");
    const store = await open();
    const notices: string[] = [];
    const watcher = new LogWatcher(store, {
      policy: { ...LIVE_POLICY, pollMs: 100 },
      notice: (l) => notices.push(l),
    });
    try {
      await watcher.start();
      expect(watcher.following).toBe("polling");
      expect(watcher.listenerStats()).toBeNull();
      const change = await appendAndSee(store, watcher, "run-polled");
      expect(change.position).toBe(await readToEnd(store));
      expect(notices).toEqual([]);
    } finally {
      await watcher.stop();
      await store.close();
    }
  });
});

describe("the live feed on PostgreSQL, woken by NOTIFY", () => {
  // The watcher recognises a PostgreSQL store through the store's door, as `loopgate serve` opens it.
  beforeAll(async () => {
    await postgresRoom();
  });
  const openPg = () => PostgresEventStore.open(db.url, { pgSchema: freshSchema(), maxConnections: 2 });

  it("an append wakes it long before its fallback poll would", async () => {
    const store = await openPg();
    const watcher = new LogWatcher(store, {
      policy: idle({ pollMs: 60_000, listeningPollMs: 60_000 }),
      notice: () => {},
    });
    try {
      await watcher.start();
      await vi.waitFor(() => expect(watcher.following).toBe("notifications"), { timeout: WAKE_BOUND_MS });
      // The first append may be read by the read every new LISTEN starts with; the second can only be
      // woken by its own notification, both polls being 60 s away.
      await appendAndSee(store, watcher, "run-first");
      const change = await appendAndSee(store, watcher, "run-second");
      expect(change.position).toBe(await readToEnd(store));
      expect(watcher.listenerStats()?.notifications).toBeGreaterThanOrEqual(1);
    } finally {
      await watcher.stop();
      await store.close();
    }
  });

  it("a lost listening connection falls back to reading every pollMs, and says so", async () => {
    const store = await openPg();
    const notices: string[] = [];
    const hour = 3_600_000;
    const watcher = new LogWatcher(store, {
      policy: idle({
        pollMs: 100,
        listeningPollMs: 60_000,
        reconnect: { idlePollMs: hour, reconnectFirstMs: hour, reconnectMaxMs: hour },
      }),
      notice: (l) => notices.push(l),
    });
    try {
      await watcher.start();
      await vi.waitFor(() => expect(watcher.following).toBe("notifications"), { timeout: WAKE_BOUND_MS });
      expect(await cutListeners()).toBe(1);
      await vi.waitFor(() => expect(watcher.following).toBe("polling"), { timeout: WAKE_BOUND_MS });
      // The listener opens again only in half an hour at the soonest: what finds this append is the poll.
      const change = await appendAndSee(store, watcher, "run-while-lost");
      expect(change.position).toBe(await readToEnd(store));
      expect(watcher.listenerStats()).toMatchObject({ state: "retrying", listens: 1 });
      expect(notices).toHaveLength(1);
      expect(notices[0]).toMatch(
        /^live updates: lost PostgreSQL's notifications \(.+\); reading the log every 100 ms until the listener is back\n$/,
      );
    } finally {
      await watcher.stop();
      await store.close();
    }
  });

  it("after a lost connection the listener comes back, says so, and appends wake it again", async () => {
    const store = await openPg();
    const notices: string[] = [];
    const watcher = new LogWatcher(store, {
      policy: idle({
        pollMs: 60_000,
        listeningPollMs: 60_000,
        reconnect: { idlePollMs: 60_000, reconnectFirstMs: 50, reconnectMaxMs: 500 },
      }),
      notice: (l) => notices.push(l),
    });
    try {
      await watcher.start();
      await vi.waitFor(() => expect(watcher.following).toBe("notifications"), { timeout: WAKE_BOUND_MS });
      expect(await cutListeners()).toBe(1);
      await vi.waitFor(() => expect(watcher.listenerStats()?.listens).toBe(2), { timeout: WAKE_BOUND_MS });
      expect(watcher.following).toBe("notifications");
      expect(notices.map((l) => l.replace(/\(.*\)/, "(…)"))).toEqual([
        "live updates: lost PostgreSQL's notifications (…); reading the log every 60000 ms until the listener is back\n",
        "live updates: PostgreSQL's notifications are back; reading the log every 60000 ms only as a fallback\n",
      ]);
      await appendAndSee(store, watcher, "run-after-first");
      const change = await appendAndSee(store, watcher, "run-after-second");
      expect(change.position).toBe(await readToEnd(store));
    } finally {
      await watcher.stop();
      await store.close();
    }
  });

  it("a schema older than the notifying one is read every pollMs, and the board says why", async () => {
    const pgSchema = freshSchema();
    const writer = await PostgresEventStore.open(db.url, { pgSchema, maxConnections: 2 });
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      await c.query(`DROP TRIGGER events_notify ON ${pgSchema}.events`);
      await c.query(`DELETE FROM ${pgSchema}.migrations WHERE version >= 9`);
    } finally {
      await c.end();
    }
    await writer.close();
    const store = await PostgresEventStore.open(db.url, { pgSchema, readonly: true, maxConnections: 2 });
    const notices: string[] = [];
    const watcher = new LogWatcher(store, { policy: idle({ pollMs: 100 }), notice: (l) => notices.push(l) });
    try {
      await watcher.start();
      expect(watcher.following).toBe("polling");
      expect(watcher.listenerStats()).toBeNull();
      expect(notices).toEqual([
        "live updates: the store's schema is version 8, older than 9 (the first whose appends notify), so the log is read every 100 ms; any loopgate command that writes to the store migrates it\n",
      ]);
    } finally {
      await watcher.stop();
      await store.close();
    }
  });
});
