// Migration 9: every statement that appends events NOTIFYs `loopgate_events` once with its schema, stream and
// last position; a schema at version 8 migrates; the migration re-applies cleanly; and the LogListener
// accepts only its own schema's appends.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LoopgateEvent } from "../../../src/core/events/loopgate-event.js";
import { LogListener, parseAppendNotice } from "../../../src/store/postgres/log-listener.js";
import { LOG_CHANNEL, LOG_NOTIFY_VERSION, PG_SCHEMA_VERSION } from "../../../src/store/postgres/pg-schema.js";
import { PostgresEventStore } from "../../../src/store/postgres/postgres-event-store.js";
import { type FreshDatabase, freshDatabase, freshSchema } from "../../support/postgres.js";
import { attempt, pristine, started } from "../../support/run-events.js";

let db: FreshDatabase;
const closers: (() => Promise<unknown>)[] = [];
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => {});
  await db?.drop();
});

/** A bound no load reaches for a notification that was sent: what is awaited here never waits for a poll. */
const BOUND_MS = 20_000;

const stored = (n: number): LoopgateEvent[] =>
  [started(["g"]), pristine(), attempt(1), attempt(2)].slice(0, n).map(
    (b) =>
      ({
        ...b,
        id: randomUUID(),
        meta: { at: new Date().toISOString(), origin: "runtime" },
      }) as LoopgateEvent,
  );

async function open(pgSchema: string): Promise<PostgresEventStore> {
  const store = await PostgresEventStore.open(db.url, { pgSchema, maxConnections: 2 });
  closers.push(() => store.close());
  return store;
}

async function client(): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  closers.push(() => c.end());
  return c;
}

/**
 * A connection that LISTENs on the log's channel and collects payloads. `drain()` sends a sentinel from
 * another connection and returns what arrived before it: notifications are delivered in the order their
 * transactions committed, so everything committed before the sentinel is in the list, and nothing later.
 */
async function tap(): Promise<{ drain(): Promise<string[]> }> {
  const c = await client();
  const sender = await client();
  let got: string[] = [];
  let sentinel: (() => void) | null = null;
  c.on("notification", (m) => {
    if (m.payload === "sentinel") sentinel?.();
    else got.push(m.payload ?? "");
  });
  await c.query(`LISTEN ${LOG_CHANNEL}`);
  return {
    async drain() {
      const arrived = new Promise<void>((resolve, reject) => {
        sentinel = resolve;
        setTimeout(() => reject(new Error("the sentinel notification never arrived")), BOUND_MS).unref();
      });
      await sender.query(`NOTIFY ${LOG_CHANNEL}, 'sentinel'`);
      await arrived;
      const out = got;
      got = [];
      return out;
    },
  };
}

/** Takes schema `s` back to version 8: no trigger on events, no function, no record of migration 9. */
async function toVersion8(s: string): Promise<void> {
  const c = await client();
  await c.query(`DROP TRIGGER events_notify ON ${s}.events`);
  await c.query(`DROP FUNCTION ${s}.events_notify()`);
  await c.query(`DELETE FROM ${s}.migrations WHERE version >= 9`);
}

describe("migration 9: appends notify", () => {
  it("is version 9, within what this code writes", () => {
    expect(LOG_NOTIFY_VERSION).toBe(9);
    expect(PG_SCHEMA_VERSION).toBeGreaterThanOrEqual(LOG_NOTIFY_VERSION);
  });

  it("a schema at version 8 migrates, then each append notifies once with its stream and last position", async () => {
    const s = freshSchema();
    const first = await open(s);
    await toVersion8(s);
    const old = await client();
    const before = await old.query(`SELECT max(version) AS v FROM ${s}.migrations`);
    expect(Number(before.rows[0]?.v)).toBe(8);
    const t = await tap();
    // At version 8 an append announces nothing.
    await first.append("run-old", stored(1), "no_stream");
    expect(await t.drain()).toEqual([]);
    const store = await open(s);
    expect(await store.version()).toBe(PG_SCHEMA_VERSION);
    await store.append("run-a", stored(3), "no_stream");
    await store.append("run-b", stored(2), "no_stream");
    // Positions are gapless from 1: run-old took 1, run-a 2..4, run-b 5..6.
    expect((await t.drain()).map((p) => JSON.parse(p))).toEqual([
      { schema: s, stream: "run-a", position: 4 },
      { schema: s, stream: "run-b", position: 6 },
    ]);
  });

  it("re-applies cleanly over its own trigger, and an append still notifies once", async () => {
    const s = freshSchema();
    await open(s);
    const c = await client();
    await c.query(`DELETE FROM ${s}.migrations WHERE version >= 9`);
    const store = await open(s);
    expect(await store.version()).toBe(PG_SCHEMA_VERSION);
    const t = await tap();
    await store.append("run-a", stored(4), "no_stream");
    expect((await t.drain()).map((p) => JSON.parse(p))).toEqual([
      { schema: s, stream: "run-a", position: 4 },
    ]);
  });

  it("a statement over several streams, or a stream past 1000 bytes, names no stream; the payload stays under 8000 bytes", async () => {
    const s = freshSchema();
    await open(s);
    const c = await client();
    const t = await tap();
    const insert = (rows: [number, string][]) =>
      c.query(
        `INSERT INTO ${s}.events (position, stream, revision, id, type, data, meta, recorded_at)
         SELECT p, st, 0, md5(random()::text), 't', '{}', '{}', now() FROM unnest($1::bigint[], $2::text[]) AS x(p, st)`,
        [rows.map((r) => r[0]), rows.map((r) => r[1])],
      );
    await insert([
      [1, "run-x"],
      [2, "run-y"],
    ]);
    // 1000 bytes of a control character: the longest stream a payload names, each byte escaped as \u0001.
    const longest = "\u0001".repeat(1000);
    await insert([[3, longest]]);
    await insert([[4, "x".repeat(1001)]]);
    // A statement that inserts nothing announces nothing.
    await insert([]);
    const payloads = await t.drain();
    expect(payloads.map((p) => JSON.parse(p))).toEqual([
      { schema: s, stream: null, position: 2 },
      { schema: s, stream: longest, position: 3 },
      { schema: s, stream: null, position: 4 },
    ]);
    for (const p of payloads) expect(Buffer.byteLength(p)).toBeLessThan(8000);
  });
});

describe("the log listener", () => {
  it("wakes on its own schema's appends only, and keeps the highest position announced", async () => {
    const mine = freshSchema();
    const store = await open(mine);
    const neighbour = await open(freshSchema());
    const l = LogListener.start({ url: db.url, pgSchema: mine });
    closers.push(() => l.close());
    await l.listening();
    expect(await l.wait(0)).toBe("notified"); // the ring of the first LISTEN
    // The neighbour's append commits first, so its notification arrives before the one of `mine`.
    await neighbour.append("run-n", stored(2), "no_stream");
    const woken = l.wait(BOUND_MS * 3);
    await store.append("run-m", stored(3), "no_stream");
    expect(await woken).toBe("notified");
    expect(l.snapshot().notifications).toBe(1);
    expect(l.lastAnnounced).toBe(3);
  });

  it("refuses payloads that are not an append's notice", () => {
    expect(parseAppendNotice("loopgate")).toBeNull();
    expect(parseAppendNotice('{"schema":"s","stream":"r","position":0}')).toBeNull();
    expect(parseAppendNotice('{"schema":"s","position":3}')).toBeNull();
    expect(parseAppendNotice('{"schema":"s","stream":null,"position":3}')).toEqual({
      schema: "s",
      stream: null,
      position: 3,
    });
  });
});
