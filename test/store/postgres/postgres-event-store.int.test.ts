import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { CorruptEventError, InputError } from "../../../src/core/kernel/errors.js";
import { StoreError } from "../../../src/store/kernel/store-errors.js";
import { PG_SCHEMA_VERSION } from "../../../src/store/postgres/pg-schema.js";
import {
  PostgresEventStore,
  PostgresStoreNotFoundError,
} from "../../../src/store/postgres/postgres-event-store.js";
import { databaseUrl, type FreshDatabase, freshDatabase, freshSchema } from "../../support/postgres.js";
import { assortedEvents, bare, batch, newStream, rejection } from "../event-fixtures.js";
import { eventStoreContract } from "../event-store-contract.js";

let db: FreshDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(async () => {
  await db?.drop();
});

// Each test of the contract gets an empty schema of its own inside this file's database.
eventStoreContract("PostgresEventStore", async () => {
  const store = await PostgresEventStore.open(db.url, { pgSchema: freshSchema() });
  return { store, cleanup: async () => {} };
});

async function sql<T extends pg.QueryResultRow>(text: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    return (await client.query<T>(text, params)).rows;
  } finally {
    await client.end();
  }
}

describe("PostgresEventStore schema and migrations", () => {
  it("records every migration once, even when eight processes' pools open a fresh schema at once", async () => {
    const pgSchema = freshSchema();
    const stores = await Promise.all(
      Array.from({ length: 8 }, () => PostgresEventStore.open(db.url, { pgSchema, maxConnections: 1 })),
    );
    const versions = await sql<{ version: number }>(
      `SELECT version FROM ${pgSchema}.migrations ORDER BY version`,
    );
    expect(versions.map((v) => v.version)).toEqual(
      Array.from({ length: PG_SCHEMA_VERSION }, (_, i) => i + 1),
    );
    for (const s of stores) expect(await s.version()).toBe(PG_SCHEMA_VERSION);
    await Promise.all(stores.map((s) => s.close()));
  });

  it("keeps events across close and reopen, and reads them read-only", async () => {
    const pgSchema = freshSchema();
    const stream = newStream();
    const events = assortedEvents();
    const first = await PostgresEventStore.open(db.url, { pgSchema });
    await first.append(stream, events, "no_stream");
    await first.close();
    const reader = await PostgresEventStore.open(db.url, { pgSchema, readonly: true });
    expect((await reader.readStream(stream)).map(bare)).toEqual(events);
    expect((await rejection(reader.append(stream, batch(1), "any"))).message).toContain("read-only");
    await reader.close();
  });

  it("refuses a schema written by a newer loopgate, and creates nothing read-only or with create: false", async () => {
    const pgSchema = freshSchema();
    await (await PostgresEventStore.open(db.url, { pgSchema })).close();
    await sql(`INSERT INTO ${pgSchema}.migrations (version, name) VALUES ($1, 'from the future')`, [
      PG_SCHEMA_VERSION + 1,
    ]);
    for (const readonly of [false, true]) {
      const error = await rejection(PostgresEventStore.open(db.url, { pgSchema, readonly }));
      expect(error).toBeInstanceOf(InputError);
      expect(error.message).toMatch(/newer than this loopgate understands/);
    }
    const empty = freshSchema();
    for (const options of [{ readonly: true }, { create: false }]) {
      const error = await rejection(PostgresEventStore.open(db.url, { pgSchema: empty, ...options }));
      expect(error).toBeInstanceOf(PostgresStoreNotFoundError);
    }
    expect(await sql("SELECT 1 FROM pg_namespace WHERE nspname = $1", [empty])).toEqual([]);
  });

  it("refuses a schema name that is not a plain identifier", async () => {
    const error = await rejection(PostgresEventStore.open(db.url, { pgSchema: "x; DROP TABLE y" }));
    expect(error).toBeInstanceOf(InputError);
  });

  it("rejects a stored row that fails its schema on read, naming stream and revision", async () => {
    const pgSchema = freshSchema();
    const store = await PostgresEventStore.open(db.url, { pgSchema });
    const stream = newStream();
    await store.append(stream, batch(2), "no_stream");
    await sql(`UPDATE ${pgSchema}.events SET data = '{"attempt":"two"}' WHERE stream = $1 AND revision = 1`, [
      stream,
    ]);
    const error = await rejection(store.readStream(stream));
    expect(error).toBeInstanceOf(CorruptEventError);
    expect(error.message).toContain(`stream ${stream} revision 1`);
    await sql(`UPDATE ${pgSchema}.events SET meta = 'not json' WHERE stream = $1 AND revision = 0`, [stream]);
    expect((await rejection(store.readAll())).message).toContain("column meta is not valid JSON");
    await store.close();
  });
});

describe("PostgresEventStore connection errors", () => {
  it("names a missing database, with the password masked, and says how to create it", async () => {
    const u = new URL(databaseUrl("loopgate_no_such_db"));
    u.password = "hunter2";
    const error = await rejection(PostgresEventStore.open(u.toString()));
    expect(error).toBeInstanceOf(StoreError);
    expect(error.message).toContain("database loopgate_no_such_db does not exist");
    expect(error.message).toContain("createdb");
    expect(error.message).toContain(":***@");
    expect(error.message).not.toContain("hunter2");
  });

  it("names a refused connection, with the password masked, and says to start PostgreSQL", async () => {
    // Port 1 on loopback: nothing listens there, so the kernel refuses at once.
    const error = await rejection(PostgresEventStore.open("postgres://me:s3cret@127.0.0.1:1/x"));
    expect(error).toBeInstanceOf(StoreError);
    expect(error.message).toContain("postgres://me:***@127.0.0.1:1/x");
    expect(error.message).toMatch(/refused the connection.*start PostgreSQL/);
    expect(error.message).not.toContain("s3cret");
  });

  it("refuses a URL without a database or host before connecting", async () => {
    for (const bad of ["postgres://127.0.0.1:5432/", "postgres:///db", "postgres://u:pw@[bad/x"]) {
      const error = await rejection(PostgresEventStore.open(bad));
      expect(error).toBeInstanceOf(InputError);
      expect(error.message).not.toContain(":pw@");
    }
  });
});

describe("PostgresEventStore one-statement append (migration 5)", () => {
  it("migrates a log written before append_batch existed and keeps numbering where it stopped", async () => {
    const pgSchema = freshSchema();
    const stream = newStream();
    const store = await PostgresEventStore.open(db.url, { pgSchema });
    await store.append(stream, batch(3), "no_stream");
    await store.close();
    // Back to schema version 4: what a database written by the previous loopgate holds.
    await sql(`DROP FUNCTION ${pgSchema}.append_batch`);
    await sql(`DELETE FROM ${pgSchema}.migrations WHERE version >= 5`);
    const reopened = await PostgresEventStore.open(db.url, { pgSchema });
    expect(await reopened.version()).toBe(PG_SCHEMA_VERSION);
    expect(await reopened.append(stream, batch(2), 2)).toEqual({ lastRevision: 4, appended: 2 });
    const all = await reopened.readAll();
    expect(all.map((e) => [e.position, e.revision])).toEqual([
      [1, 0],
      [2, 1],
      [3, 2],
      [4, 3],
      [5, 4],
    ]);
    await reopened.close();
  });

  it("checks the expected revision inside the function: a stale call writes nothing", async () => {
    const pgSchema = freshSchema();
    const stream = newStream();
    const store = await PostgresEventStore.open(db.url, { pgSchema });
    await store.append(stream, batch(2), "no_stream");
    const call = (expected: string, id: string) =>
      sql<{ result_kind: string; result_revision: number | null }>(
        `SELECT * FROM ${pgSchema}.append_batch($1, $2, $3, $4, $5, $6, $7, $8)`,
        [stream, expected, [id], ["attempt_started"], ['{"attempt":1}'], ["{}"], "a", "a"],
      );
    // The stream's last revision is 1: each of these expectations is false for it.
    for (const expected of ["0", "2", "no_stream"])
      expect(await call(expected, `stale-${expected}`)).toEqual([
        { result_kind: "conflict", result_revision: 1 },
      ]);
    // An id already stored is reported before anything else, and nothing is written either.
    const [stored] = await store.readStream(stream, { limit: 1 });
    expect(await call("1", stored?.id ?? "")).toEqual([{ result_kind: "ids_stored", result_revision: null }]);
    expect((await store.readAll()).map((e) => e.revision)).toEqual([0, 1]);
    const head = await sql<{ last_position: string }>(`SELECT last_position FROM ${pgSchema}.log_head`);
    expect(head.map((h) => Number(h.last_position))).toEqual([2]);
    await store.close();
  });

  it("sends one statement per new batch; a batch with a stored id takes the full transaction", async () => {
    const pgSchema = freshSchema();
    const store = await PostgresEventStore.open(db.url, { pgSchema, maxConnections: 1 });
    const stream = newStream();
    const first = batch(3);
    // Counts what the real connection is asked to run (pooled clients are pg.Client instances).
    const sent = vi.spyOn(pg.Client.prototype, "query");
    try {
      expect(await store.append(stream, first, "no_stream")).toEqual({ lastRevision: 2, appended: 3 });
      expect(await store.append(stream, batch(1), 2)).toEqual({ lastRevision: 3, appended: 1 });
      expect(sent).toHaveBeenCalledTimes(2);
      sent.mockClear();
      // The retry of the first append: the function finds its ids stored, the full path answers.
      expect(await store.append(stream, first, "no_stream")).toEqual({ lastRevision: 2, appended: 0 });
      expect(sent.mock.calls.length).toBeGreaterThan(1);
    } finally {
      sent.mockRestore();
    }
    expect((await store.readStream(stream)).map((e) => e.revision)).toEqual([0, 1, 2, 3]);
    await store.close();
  });

  it("refuses to append when the position counter row is missing, naming the table", async () => {
    const pgSchema = freshSchema();
    const store = await PostgresEventStore.open(db.url, { pgSchema });
    await sql(`DELETE FROM ${pgSchema}.log_head`);
    const error = await rejection(store.append(newStream(), batch(1), "any"));
    expect(error.message).toContain(`${pgSchema}.log_head holds no position row`);
    expect(await store.readAll()).toEqual([]);
    await store.close();
  });
});
