import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { StoreError } from "../../../src/store/kernel/store-errors.js";
import { integrityProblems, PostgresEventStore } from "../../../src/store/postgres/postgres-event-store.js";
import { type FreshDatabase, freshDatabase, freshSchema } from "../../support/postgres.js";
import { batch, newStream, rejection } from "../event-fixtures.js";

let db: FreshDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(async () => {
  await db?.drop();
});

async function sql(text: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    return await client.query(text, params);
  } finally {
    await client.end();
  }
}

describe("PostgresEventStore integrity check", () => {
  it("finds nothing wrong in a log written through the store, and names each kind of damage", async () => {
    const pgSchema = freshSchema();
    const store = await PostgresEventStore.open(db.url, { pgSchema });
    const [a, b] = [newStream("a"), newStream("b")];
    await store.append(a, batch(3), "no_stream");
    await store.append(b, batch(2), "no_stream");
    await store.append(a, batch(2), 2);
    expect(await integrityProblems(store)).toEqual([]);

    // A gap inside stream a (revision 1 removed), behind the store's back.
    await sql(`DELETE FROM ${pgSchema}.events WHERE stream = $1 AND revision = 1`, [a]);
    const problems = await integrityProblems(store);
    expect(problems).toContainEqual(
      expect.stringMatching(new RegExp(`^stream ${a}: 4 events but revisions 0..4`)),
    );
    expect(problems).toContainEqual(
      expect.stringMatching(/^positions: 6 events at positions 1..7, counter 7/),
    );
    expect(problems.some((p) => p.includes(b))).toBe(false);
    await store.close();
  });

  it("notices a stream index that disagrees with the events", async () => {
    const pgSchema = freshSchema();
    const store = await PostgresEventStore.open(db.url, { pgSchema });
    const a = newStream();
    await store.append(a, batch(2), "no_stream");
    await sql(`UPDATE ${pgSchema}.streams SET last_revision = 5 WHERE stream = $1`, [a]);
    expect(await integrityProblems(store)).toEqual([`stream ${a}: index says last revision 5, events say 1`]);
    await store.close();
  });
});

describe("PostgresEventStore when the database goes away", () => {
  it("commits nothing of an append whose session is killed, says so clearly, and works again afterwards", async () => {
    const pgSchema = freshSchema();
    const store = await PostgresEventStore.open(db.url, { pgSchema, maxConnections: 1 });
    const stream = newStream();
    await store.append(stream, batch(1), "no_stream");
    // Hold the position lock from another session, so the store's append waits inside its transaction…
    const blocker = new pg.Client({ connectionString: db.url });
    await blocker.connect();
    await blocker.query(`BEGIN; SELECT * FROM ${pgSchema}.log_head FOR UPDATE`);
    const events = batch(2);
    const pending = rejection(store.append(stream, events, 0));
    // …then kill the store's session (an operator, a failover, a crashed server look the same to it).
    let killed = 0;
    for (let i = 0; i < 100 && killed === 0; i++) {
      const r = await sql(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database() AND pid <> pg_backend_pid() AND pid <> $1 AND application_name = 'loopgate'
            AND wait_event_type = 'Lock'`,
        [(await blocker.query("SELECT pg_backend_pid() AS p")).rows[0].p],
      );
      killed = r.rowCount ?? 0;
      if (killed === 0) await new Promise((r) => setTimeout(r, 50));
    }
    expect(killed).toBe(1);
    const error = await pending;
    expect(error).toBeInstanceOf(StoreError);
    expect(error.message).toContain(store.target.display);
    expect(error.message).toMatch(/connection to PostgreSQL was lost/);
    await blocker.query("ROLLBACK");
    await blocker.end();
    // Nothing of the killed append landed; its retry (same ids) now succeeds once.
    expect((await store.readStream(stream)).map((e) => e.revision)).toEqual([0]);
    expect(await store.append(stream, events, 0)).toEqual({ lastRevision: 2, appended: 2 });
    expect(await store.append(stream, events, 0)).toEqual({ lastRevision: 2, appended: 0 });
    expect(await integrityProblems(store)).toEqual([]);
    await store.close();
  });
});
