// prunePostgres on a real PostgreSQL: removed streams stay accounted for in the integrity check (which
// still finds a lost event elsewhere), a stream that moved on since gc planned is left alone, content a
// remaining event names stays, content within the grace period stays, a dry run changes nothing.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LoopgateEvent } from "../../../src/core/events/loopgate-event.js";
import { contentHash } from "../../../src/store/kernel/content-store.js";
import { prunePostgres } from "../../../src/store/postgres/pg-prune.js";
import { integrityProblems, PostgresEventStore } from "../../../src/store/postgres/postgres-event-store.js";
import { type FreshDatabase, freshDatabase, freshSchema } from "../../support/postgres.js";
import { attemptStarted, batch, newId, newStream } from "../event-fixtures.js";

let db: FreshDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(async () => {
  await db?.drop();
});

async function open(): Promise<PostgresEventStore> {
  return PostgresEventStore.open(db.url, { pgSchema: freshSchema() });
}
async function sql(store: PostgresEventStore, text: string, params: unknown[] = []) {
  return store.withClient(async (c) => (await c.query(text, params)).rows);
}
const count = async (store: PostgresEventStore, table: string) =>
  Number((await sql(store, `SELECT count(*) AS n FROM ${store.pgSchema}.${table}`))[0]?.n);

describe("prunePostgres", () => {
  it("removes a stream's events, and the integrity check still accounts for every position and finds a real gap", async () => {
    const store = await open();
    const [a, b, c] = [newStream("a"), newStream("b"), newStream("c")];
    await store.append(a, batch(3), "no_stream");
    await store.append(b, batch(2), "no_stream");
    await store.append(c, batch(4), "no_stream");
    const r = await prunePostgres(store, {
      candidates: [{ stream: b, lastRevision: 1 }],
      dryRun: false,
      jobCutoffMs: 0,
    });
    expect(r.streams).toEqual([{ stream: b, events: 2 }]);
    expect(await store.readStream(b)).toEqual([]);
    expect((await store.listStreams()).map((s) => s.stream).sort()).toEqual([a, c].sort());
    expect(await integrityProblems(store)).toEqual([]);
    // Appends go on at the next position.
    await store.append(a, batch(1), 2);
    expect(await integrityProblems(store)).toEqual([]);
    // An event lost behind the store's back is still found: 10 appended, 2 removed by gc, 1 lost = 7 held.
    await sql(store, `DELETE FROM ${store.pgSchema}.events WHERE stream = $1 AND revision = 3`, [c]);
    expect(await integrityProblems(store)).toContainEqual(
      expect.stringMatching(/^positions: 7 events at positions 1\.\.10, counter 10, 2 removed by gc/),
    );
    await store.close();
  });

  it("leaves a stream that got an event since gc planned, and a dry run changes nothing", async () => {
    const store = await open();
    const a = newStream("a");
    await store.append(a, batch(2), "no_stream");
    const stale = await prunePostgres(store, {
      candidates: [{ stream: a, lastRevision: 0 }],
      dryRun: false,
      jobCutoffMs: 0,
    });
    expect(stale.streams).toEqual([]);
    expect(stale.skipped).toEqual([{ stream: a, why: "it has new events since gc looked (revision 1)" }]);
    const dry = await prunePostgres(store, {
      candidates: [{ stream: a, lastRevision: 1 }],
      dryRun: true,
      jobCutoffMs: 0,
    });
    expect(dry.streams).toEqual([{ stream: a, events: 2 }]);
    expect((await store.readStream(a)).length).toBe(2);
    expect(await count(store, "pruned_streams")).toBe(0);
    await store.close();
  });

  it("removes only what a removed run alone named: not what a remaining run names, not fresh content, not content no run named", async () => {
    const store = await open();
    const content = store.content();
    const blob = (t: string) => {
      const b = Buffer.from(t);
      return { b, h: contentHash(b) };
    };
    const shared = blob("named by the removed run and by a remaining one\n");
    const only = blob("named by the removed run alone\n");
    const fresh = blob("named by the removed run alone, stored just now\n");
    const foreign = blob("named by no run (a goal repository's pack, say)\n");
    // An observation no event names (a goal repository's record, say), whose body names `foreign`.
    const record = contentHash(Buffer.from("record key"));
    for (const x of [shared, only, foreign]) await content.putBlob(x.h, x.b);
    await content.putObservation(record, JSON.stringify({ pack: foreign.h }));
    await sql(store, `UPDATE ${store.pgSchema}.blobs SET stored_at = now() - interval '1 hour'`);
    await sql(store, `UPDATE ${store.pgSchema}.observations SET stored_at = now() - interval '1 hour'`);
    await content.putBlob(fresh.h, fresh.b);
    // An event whose data names blobs (here in the required fix's text, as an observation id would be).
    const naming = (...hashes: string[]) =>
      ({ ...attemptStarted(newId()), data: { attempt: 1, required_fix: hashes.join(" ") } }) as LoopgateEvent;
    const [removed, kept] = [newStream("run"), newStream("run")];
    await store.append(removed, [naming(shared.h, only.h, fresh.h)], "no_stream");
    await store.append(kept, [naming(shared.h)], "no_stream");
    const dry = await prunePostgres(store, {
      candidates: [{ stream: removed, lastRevision: 0 }],
      dryRun: true,
      jobCutoffMs: 0,
    });
    expect(dry.blobs).toBe(1);
    // (Read with a plain SELECT: missingBlobs renews what it finds, as a saver about to name it would.)
    const held = async () =>
      (await sql(store, `SELECT hash FROM ${store.pgSchema}.blobs`)).map((r) => String(r.hash)).sort();
    const all = [shared.h, only.h, fresh.h, foreign.h].sort();
    expect(await held()).toEqual(all);
    const r = await prunePostgres(store, {
      candidates: [{ stream: removed, lastRevision: 0 }],
      dryRun: false,
      jobCutoffMs: 0,
    });
    expect(r.blobs).toBe(1);
    expect(r.blob_bytes).toBe(only.b.length);
    expect(await held()).toEqual(all.filter((h) => h !== only.h));
    expect(await content.getObservation(record)).toBe(JSON.stringify({ pack: foreign.h }));
    await store.close();
  });

  it("removes a finished run job without a run, and its task snapshot; leaves a job of another kind", async () => {
    const store = await open();
    const content = store.content();
    const file = Buffer.from("a task file\n");
    const manifest = Buffer.from(
      JSON.stringify({ version: 1, task_file: "t.yaml", files: [contentHash(file)] }),
    );
    for (const b of [file, manifest]) await content.putBlob(contentHash(b), b);
    await sql(store, `UPDATE ${store.pgSchema}.blobs SET stored_at = now() - interval '1 hour'`);
    const queue = store.queue();
    const refused = await queue.submit({
      taskPath: "/gone/t.yaml",
      taskDigest: "d".repeat(64),
      options: { oracle: true, task_snapshot: contentHash(manifest) },
    });
    const other = await queue.submit({
      taskPath: "goal:g1",
      taskDigest: "e".repeat(64),
      options: { job_kind: "goal_turn", goal_id: "g1" },
    });
    for (const _ of [refused, other]) {
      const claim = await queue.claim("w", 60_000);
      if (!claim) throw new Error("nothing to claim");
      expect(await queue.finish(claim.job.jobId, claim.token, "REFUSED: gone")).toBe(true);
    }
    const r = await prunePostgres(store, { candidates: [], dryRun: false, jobCutoffMs: 0 });
    expect(r.jobs).toBe(1);
    expect((await queue.list()).map((j) => j.jobId)).toEqual([other.jobId]);
    // The manifest and the file it names go with the only job that named them.
    expect(r.blobs).toBe(2);
    expect(await count(store, "blobs")).toBe(0);
    await store.close();
  });
});
