// The kill campaign's store checks on real stores: a sound log passes; a SQLite file with damaged pages,
// a stream index that disagrees with the events, a Postgres log missing its UNIQUE (stream, revision)
// constraint with a duplicate revision in it, or a gap in a stream, is reported.
import { closeSync, mkdtempSync, openSync, rmSync, statSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { logProblems } from "../../bench/campaign/log-checks.js";
import { postgresIntegrity, sqliteIntegrity } from "../../bench/campaign/store-checks.js";
import { PostgresEventStore } from "../../src/store/postgres/postgres-event-store.js";
import { SqliteEventStore } from "../../src/store/sqlite/sqlite-event-store.js";
import { attemptStarted, batch, newStream } from "../store/event-fixtures.js";
import { type FreshDatabase, freshDatabase, freshSchema } from "../support/postgres.js";

const temps: string[] = [];
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

/** A SQLite log with a few streams, closed; returns its file. */
async function sqliteLog(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "campaign-checks-"));
  temps.push(dir);
  const file = join(dir, "events.db");
  const store = SqliteEventStore.open(file);
  // Enough rows that the events table spans many pages.
  for (let s = 0; s < 20; s++) await store.append(newStream(), batch(20), "no_stream");
  await store.close();
  return file;
}

describe("sqliteIntegrity", () => {
  it("finds nothing wrong in a sound log", async () => {
    expect(sqliteIntegrity(await sqliteLog())).toEqual([]);
  });

  it("reports a file whose pages were overwritten", async () => {
    const file = await sqliteLog();
    const size = statSync(file).size;
    const fd = openSync(file, "r+");
    // Garbage over the second half of the file, leaving the header (page 1) intact.
    writeSync(fd, Buffer.alloc(Math.floor(size / 2), 0xa5), 0, Math.floor(size / 2), Math.floor(size / 2));
    closeSync(fd);
    expect(sqliteIntegrity(file).length).toBeGreaterThan(0);
  });

  it("reports a stream index that disagrees with the events", async () => {
    const file = await sqliteLog();
    const db = new Database(file);
    const stream = db.prepare("SELECT stream FROM streams LIMIT 1").pluck().get() as string;
    db.prepare("UPDATE streams SET last_revision = 99 WHERE stream = ?").run(stream);
    db.close();
    expect(sqliteIntegrity(file)).toEqual([`stream ${stream}: index says last revision 99, events say 19`]);
  });
});

describe("postgresIntegrity", () => {
  let db: FreshDatabase;
  const stores: PostgresEventStore[] = [];
  beforeAll(async () => {
    db = await freshDatabase();
  });
  afterAll(async () => {
    await Promise.all(stores.map((s) => s.close()));
    await db?.drop();
  });
  async function pgLog() {
    const store = await PostgresEventStore.open(db.url, { pgSchema: freshSchema(), maxConnections: 1 });
    stores.push(store);
    const stream = newStream();
    await store.append(stream, batch(5), "no_stream");
    await store.append(newStream(), batch(3), "no_stream");
    return { store, stream, t: `${store.pgSchema}.events` };
  }

  it("finds nothing wrong in a sound log", async () => {
    const { store } = await pgLog();
    expect(await postgresIntegrity(store)).toEqual([]);
  });

  it("reports a missing UNIQUE (stream, revision) and the duplicate revision it let in", async () => {
    const { store, stream, t } = await pgLog();
    const e = attemptStarted();
    await store.withClient(async (c) => {
      await c.query(`ALTER TABLE ${t} DROP CONSTRAINT events_stream_revision_unique`);
      await c.query(
        `INSERT INTO ${t} (position, stream, revision, id, type, data, meta, recorded_at)
         VALUES (1000, $1, 2, $2, $3, $4, $5, now())`,
        [stream, e.id, e.type, JSON.stringify(e.data), JSON.stringify(e.meta)],
      );
    });
    const problems = await postgresIntegrity(store);
    expect(problems).toContain("constraint events_stream_revision_unique is missing");
    expect(problems).toContain(`stream ${stream} revision 2 stored 2 times`);
    // The read side sees it too.
    expect(logProblems(await store.readAll())).toContain(
      `stream ${stream}: revision 2 again (duplicate; expected 5)`,
    );
  });

  it("reports a gap left by a vanished event", async () => {
    const { store, stream, t } = await pgLog();
    await store.withClient((c) => c.query(`DELETE FROM ${t} WHERE stream = $1 AND revision = 2`, [stream]));
    const problems = await postgresIntegrity(store);
    expect(problems).toContain(`stream ${stream}: 4 events but revisions 0..4`);
    expect(logProblems(await store.readAll())).toEqual([`stream ${stream}: revision 3 after 1 (gap)`]);
  });
});
