// The cap on lost claims, on real PostgreSQL: a job whose holder's lease runs out again and again (a job
// that kills its worker) is finished as TOOL_FAILURE with the reason once the cap is reached, and never
// handed out again; polite give-backs never count; a job under the cap finishes as usual; and a schema
// written before the cap existed (version 7) is migrated on open.
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PG_SCHEMA_VERSION } from "../../../src/store/postgres/pg-schema.js";
import { PostgresEventStore } from "../../../src/store/postgres/postgres-event-store.js";
import type { Claim, PostgresRunQueue } from "../../../src/store/postgres/run-queue.js";
import { type FreshDatabase, freshDatabase, freshSchema } from "../../support/postgres.js";

let db: FreshDatabase;
const stores: PostgresEventStore[] = [];
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(async () => {
  await Promise.all(stores.map((s) => s.close()));
  await db?.drop();
});

/** The cap loopgate ships with, as documented (docs/guides/postgres-and-workers.md): 3 lost claims. */
const CAP = 3;
/** A lease short enough to run out within the test, never heartbeated. */
const SHORT_MS = 200;
/** How long a test waits for a lease to run out (generous: other suites share the CPUs). */
const BOUND_MS = 15_000;

/** `n` queues on one fresh schema, each through its own store (its own pool of connections). */
async function queues(n: number, pgSchema = freshSchema()): Promise<PostgresRunQueue[]> {
  const out: PostgresRunQueue[] = [];
  for (let i = 0; i < n; i++) {
    const store = await PostgresEventStore.open(db.url, { pgSchema, maxConnections: 2 });
    stores.push(store);
    out.push(store.queue());
  }
  return out;
}

async function oneQueue(): Promise<PostgresRunQueue> {
  const [q] = await queues(1);
  if (!q) throw new Error("no queue");
  return q;
}

const job = (i: number) => ({ taskPath: `/tasks/t${i}/task.yaml`, taskDigest: `d${i}`, options: { n: i } });

/** Claims with a short lease until a claim is returned or the bound passes (then fails the test). */
async function claimWithin(q: PostgresRunQueue, worker: string): Promise<Claim> {
  const until = Date.now() + BOUND_MS;
  for (;;) {
    const c = await q.claim(worker, SHORT_MS);
    if (c) return c;
    if (Date.now() > until) throw new Error(`no claim within ${BOUND_MS} ms`);
    await sleep(50);
  }
}

/**
 * Waits (bounded) until the lease of `jobId` has run out by the database's clock. A row's lease is read
 * back to the whole second, so it counts as out one second after the time read.
 */
async function untilExpired(q: PostgresRunQueue, jobId: string): Promise<void> {
  const until = Date.now() + BOUND_MS;
  for (;;) {
    const row = await q.find({ jobId });
    if (row?.lockedUntil && Date.parse(row.lockedUntil) + 1000 <= (await q.now()).getTime()) return;
    if (Date.now() > until) throw new Error(`the lease of ${jobId} did not run out within ${BOUND_MS} ms`);
    await sleep(50);
  }
}

/** Submits a job and loses `lost` claims of it: claimed `lost + 1` times, never heartbeated. */
async function jobLostTimes(
  q: PostgresRunQueue,
  lost: number,
  i = 0,
): Promise<{ jobId: string; last: Claim }> {
  const { jobId } = await q.submit(job(i));
  let last = await claimWithin(q, "w0");
  expect(last.job.jobId).toBe(jobId);
  for (let n = 1; n <= lost; n++) {
    last = await claimWithin(q, `w${n}`);
    expect(last.job.jobId).toBe(jobId);
  }
  return { jobId, last };
}

describe("a job whose claims are lost again and again is dead-lettered at the cap", () => {
  it(`the ${CAP}rd expiry finishes it as TOOL_FAILURE naming the cap; no claim gets it again`, async () => {
    const q = await oneQueue();
    const { jobId } = await q.submit(job(0));
    const first = await q.claim("w0", SHORT_MS);
    expect(first?.job).toMatchObject({ jobId, attempts: 1, lostClaims: 0 });
    expect(await q.setRunId(jobId, first?.token ?? "", "run-doomed")).toBe(true);
    // Each takeover of the expired lease is one lost claim; the job is handed out each time below the cap.
    for (let n = 1; n < CAP; n++) {
      const c = await claimWithin(q, `w${n}`);
      expect(c.job).toMatchObject({ jobId, attempts: n + 1, lostClaims: n, runId: "run-doomed" });
    }
    // The cap-th expiry: no claim returns the job, and the first claim after it finishes the row.
    await untilExpired(q, jobId);
    const told: string[] = [];
    expect(
      await q.claim("late", SHORT_MS, { onDeadLetter: (j) => told.push(`${j.jobId} ${j.status}`) }),
    ).toBeNull();
    expect(told).toEqual([`${jobId} TOOL_FAILURE`]);
    const row = await q.find({ jobId });
    expect(row).toMatchObject({
      state: "finished",
      status: "TOOL_FAILURE",
      lostClaims: CAP,
      attempts: CAP,
      claimedBy: null,
      lockedUntil: null,
    });
    expect(row?.deadReason).toContain(`lost ${CAP} time(s)`);
    expect(row?.deadReason).toContain(`lostClaimsToDeadLetter ${CAP}`);
    expect(row?.deadReason).toContain(`last held by w${CAP - 1}`);
    expect(row?.deadReason).toContain("loopgate resume run-doomed --store");
    // Never claimed again, and the last holder's token has no rights left.
    expect(await q.claim("later", 60_000)).toBeNull();
    expect(await q.unfinished()).toBe(0);
  });

  it("the claim that dead-letters a job goes on to the next claimable one", async () => {
    const q = await oneQueue();
    const { jobId: doomed } = await jobLostTimes(q, CAP - 1, 0);
    const { jobId: next } = await q.submit(job(1));
    await untilExpired(q, doomed);
    const c = await q.claim("w", 60_000);
    expect(c?.job).toMatchObject({ jobId: next, attempts: 1, lostClaims: 0 });
    const row = await q.find({ jobId: doomed });
    expect(row).toMatchObject({ state: "finished", status: "TOOL_FAILURE", lostClaims: CAP });
    expect(row?.deadReason).toContain("had not started a run");
    expect(await q.finish(next, c?.token ?? "", "SUCCESS")).toBe(true);
  });

  it("6 claimers racing on an expired job at the cap: none gets it, it is finished once", async () => {
    const pgSchema = freshSchema();
    const qs = await queues(6, pgSchema);
    const [q] = qs;
    if (!q) throw new Error("no queue");
    const { jobId, last } = await jobLostTimes(q, CAP - 1);
    await untilExpired(q, jobId);
    const got = await Promise.all(qs.map((each, w) => each.claim(`racer${w}`, 60_000)));
    expect(got.filter((c) => c !== null)).toEqual([]);
    expect(await q.find({ jobId })).toMatchObject({
      state: "finished",
      status: "TOOL_FAILURE",
      lostClaims: CAP,
    });
    expect(await q.finish(jobId, last.token, "SUCCESS")).toBe(false);
    expect(await q.heartbeat(jobId, last.token, 60_000)).toBeNull();
    expect(await q.claim("after", 60_000)).toBeNull();
  });

  it("6 claimers racing with a job at the cap and a fresh one: exactly one gets the fresh job", async () => {
    const qs = await queues(6);
    const [q] = qs;
    if (!q) throw new Error("no queue");
    const { jobId: doomed } = await jobLostTimes(q, CAP - 1, 0);
    const { jobId: fresh } = await q.submit(job(1));
    await untilExpired(q, doomed);
    const got = (await Promise.all(qs.map((each, w) => each.claim(`racer${w}`, 60_000)))).filter(
      (c) => c !== null,
    );
    expect(got.map((c) => c.job.jobId)).toEqual([fresh]);
    expect((await q.find({ jobId: doomed }))?.status).toBe("TOOL_FAILURE");
  });
});

describe("what does not count toward the cap", () => {
  it("a job released and handed back politely any number of times is never dead-lettered", async () => {
    const q = await oneQueue();
    const { jobId } = await q.submit(job(0));
    for (let n = 0; n < 4 * CAP; n++) {
      const c = await q.claim(`w${n}`, 60_000);
      expect(c?.job).toMatchObject({ jobId, lostClaims: 0, state: "claimed" });
      if (n % 2 === 0) expect(await q.release(jobId, c?.token ?? "")).toBe(true);
      else expect(await q.handBack(jobId, c?.token ?? "", "no sandbox here")).toBe(true);
    }
    const c = await q.claim("last", 60_000);
    expect(c?.job).toMatchObject({ jobId, attempts: 4 * CAP + 1, lostClaims: 0, deadReason: null });
    expect(await q.finish(jobId, c?.token ?? "", "SUCCESS")).toBe(true);
    expect(await q.find({ jobId })).toMatchObject({ state: "finished", status: "SUCCESS", deadReason: null });
  });

  it(`a job that loses ${CAP - 1} claims and then finishes, finishes as usual`, async () => {
    const q = await oneQueue();
    const { jobId, last } = await jobLostTimes(q, CAP - 1);
    expect(last.job.lostClaims).toBe(CAP - 1);
    expect(await q.finish(jobId, last.token, "SUCCESS")).toBe(true);
    expect(await q.find({ jobId })).toMatchObject({
      state: "finished",
      status: "SUCCESS",
      lostClaims: CAP - 1,
      deadReason: null,
    });
    expect(await q.claim("w", 60_000)).toBeNull();
  });
});

describe("migration 8", () => {
  it("a schema at version 7 opens, migrates to 8, and its rows start with 0 lost claims", async () => {
    const pgSchema = freshSchema();
    const store = await PostgresEventStore.open(db.url, { pgSchema, maxConnections: 2 });
    const q = store.queue();
    const { jobId: queued } = await q.submit(job(0));
    const { jobId: held } = await q.submit(job(1));
    expect((await q.claim("w", SHORT_MS))?.job.jobId).toBe(queued);
    expect((await q.claim("w", SHORT_MS))?.job.jobId).toBe(held);
    await store.close();
    // Back to schema version 7: what a database written by the previous loopgate holds.
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query(
        `ALTER TABLE ${pgSchema}.run_queue DROP COLUMN lost_claims, DROP COLUMN dead_reason`,
      );
      await client.query(`DELETE FROM ${pgSchema}.migrations WHERE version >= 8`);
      const v = await client.query(`SELECT max(version) AS v FROM ${pgSchema}.migrations`);
      expect(Number(v.rows[0]?.v)).toBe(7);
    } finally {
      await client.end();
    }
    const reopened = await PostgresEventStore.open(db.url, { pgSchema, maxConnections: 2 });
    stores.push(reopened);
    expect(PG_SCHEMA_VERSION).toBeGreaterThanOrEqual(8);
    expect(await reopened.version()).toBe(PG_SCHEMA_VERSION);
    const rq = reopened.queue();
    for (const r of await rq.list()) expect(r).toMatchObject({ lostClaims: 0, deadReason: null });
    // The claims held when the schema was older expire and are taken over, counted from 0.
    const taken = await claimWithin(rq, "w2");
    expect(taken.job).toMatchObject({ jobId: queued, lostClaims: 1 });
  });
});
