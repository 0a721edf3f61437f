// The run queue on real PostgreSQL: SKIP LOCKED claims are exclusive under a race of separate
// connections, and every right (heartbeat, run id, finish, release, hand-back) belongs to a live
// claim's token.
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresEventStore } from "../../../src/store/postgres/postgres-event-store.js";
import type { PostgresRunQueue } from "../../../src/store/postgres/run-queue.js";
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

/** `n` queues on one fresh schema, each through its own store (its own pool of connections). */
async function queues(n: number): Promise<PostgresRunQueue[]> {
  const pgSchema = freshSchema();
  const out: PostgresRunQueue[] = [];
  for (let i = 0; i < n; i++) {
    const store = await PostgresEventStore.open(db.url, { pgSchema, maxConnections: 2 });
    stores.push(store);
    out.push(store.queue());
  }
  return out;
}

const job = (i: number) => ({
  taskPath: `/tasks/t${i}/task.yaml`,
  taskDigest: `d${i}`,
  options: { noop: true },
});

describe("claims racing over one queue", () => {
  it("4 workers on separate connections share 200 jobs: one holder at a time, none lost, none finished twice", async () => {
    const [first, ...rest] = await queues(4);
    if (!first) throw new Error("no queue");
    const submitted = new Set<string>();
    for (let i = 0; i < 200; i++) submitted.add((await first.submit(job(i))).jobId);
    const holding = new Map<string, string>();
    const doubleHeld: string[] = [];
    const finishedBy = new Map<string, string[]>();
    const refusedFinish: string[] = [];
    const perWorker = new Map<string, number>();
    await Promise.all(
      [first, ...rest].map(async (queue, w) => {
        const me = `w${w}`;
        for (;;) {
          const claim = await queue.claim(me, 60_000);
          if (!claim) return;
          const id = claim.job.jobId;
          if (holding.has(id)) doubleHeld.push(`${id} by ${holding.get(id)} and ${me}`);
          holding.set(id, me);
          perWorker.set(me, (perWorker.get(me) ?? 0) + 1);
          await sleep(Math.random() * 3);
          holding.delete(id);
          if (await queue.finish(id, claim.token, "SUCCESS"))
            finishedBy.set(id, [...(finishedBy.get(id) ?? []), me]);
          else refusedFinish.push(id);
        }
      }),
    );
    expect(doubleHeld).toEqual([]);
    expect(refusedFinish).toEqual([]);
    expect(new Set(finishedBy.keys())).toEqual(submitted);
    expect([...finishedBy.values()].filter((by) => by.length !== 1)).toEqual([]);
    const rows = await first.list();
    expect(rows).toHaveLength(200);
    expect(rows.filter((r) => r.state !== "finished" || r.attempts !== 1 || r.status !== "SUCCESS")).toEqual(
      [],
    );
    expect([...perWorker.values()].reduce((a, b) => a + b, 0)).toBe(200);
  });
});

describe("the rights of a claim", () => {
  it("a live claim is not claimable by another; a stranger's token can do nothing", async () => {
    const [a, b] = await queues(2);
    if (!a || !b) throw new Error("no queue");
    const { jobId } = await a.submit(job(1));
    const claim = await a.claim("a", 60_000);
    expect(claim?.job.jobId).toBe(jobId);
    expect(await b.claim("b", 60_000)).toBeNull();
    const stranger = "0".repeat(32);
    expect(await b.heartbeat(jobId, stranger, 60_000)).toBeNull();
    expect(await b.setRunId(jobId, stranger, "run-x")).toBe(false);
    expect(await b.finish(jobId, stranger, "SUCCESS")).toBe(false);
    expect(await b.release(jobId, stranger)).toBe(false);
    expect((await a.list())[0]).toMatchObject({
      state: "claimed",
      claimedBy: "a",
      runId: null,
      status: null,
    });
  });

  it("a holder whose lease expired loses heartbeat, run id, finish and release; the next claimer holds it", async () => {
    const [a, b] = await queues(2);
    if (!a || !b) throw new Error("no queue");
    const { jobId } = await a.submit(job(2));
    // A lease long enough that a loaded machine still sets the run id inside it, short enough to wait out.
    const old = await a.claim("a", 2_000);
    if (!old) throw new Error("no claim");
    expect(await a.setRunId(jobId, old.token, "run-1")).toBe(true);
    await sleep(3_000);
    expect(await a.heartbeat(jobId, old.token, 60_000)).toBeNull();
    expect(await a.finish(jobId, old.token, "SUCCESS")).toBe(false);
    expect(await a.release(jobId, old.token)).toBe(false);
    const next = await b.claim("b", 60_000);
    expect(next?.job).toMatchObject({ jobId, attempts: 2, runId: "run-1", claimedBy: "b" });
    if (!next) throw new Error("no claim");
    expect(next.token).not.toBe(old.token);
    expect(await a.finish(jobId, old.token, "SUCCESS")).toBe(false);
    expect(await b.setRunId(jobId, next.token, "run-2")).toBe(false); // the run id is set once
    expect(await b.heartbeat(jobId, next.token, 60_000)).not.toBeNull();
    expect(await b.finish(jobId, next.token, "ESCALATED")).toBe(true);
    expect(await b.finish(jobId, next.token, "ESCALATED")).toBe(false);
    expect((await a.list())[0]).toMatchObject({ state: "finished", status: "ESCALATED", runId: "run-1" });
  });

  it("a released job goes back to the queue with its run id, and a live worker id cannot be taken", async () => {
    const [a, b] = await queues(2);
    if (!a || !b) throw new Error("no queue");
    const { jobId } = await a.submit(job(3));
    const c = await a.claim("a", 60_000);
    if (!c) throw new Error("no claim");
    await a.setRunId(jobId, c.token, "run-3");
    expect(await a.release(jobId, c.token)).toBe(true);
    expect((await b.claim("b", 60_000))?.job).toMatchObject({ jobId, runId: "run-3", attempts: 2 });
    await a.announceWorker({ workerId: "w", host: "h1", pid: 1, concurrency: 1 }, 60_000);
    await expect(
      b.announceWorker({ workerId: "w", host: "h2", pid: 2, concurrency: 1 }, 60_000),
    ).rejects.toThrow(/worker id "w" is in use/);
    const live = await b.liveWorkers();
    expect(live.map((l) => l.worker.workerId)).toEqual(["w"]);
  });
});

describe("handing a job back because this machine cannot start it", () => {
  it("queues it again, unclaimed, with its run id, the reason, the worker and the count; never finished", async () => {
    const [a, b] = await queues(2);
    if (!a || !b) throw new Error("no queue");
    const { jobId } = await a.submit(job(4));
    const first = await a.claim("w-bad", 60_000);
    if (!first) throw new Error("no claim");
    await a.setRunId(jobId, first.token, "run-4");
    expect(await a.handBack(jobId, first.token, "the work folder /x is not usable: ENOTDIR")).toBe(true);
    const [row] = await b.list();
    expect(row).toMatchObject({
      jobId,
      state: "queued",
      claimedBy: null,
      lockedUntil: null,
      runId: "run-4",
      status: null,
      attempts: 1,
      handedBack: { times: 1, reason: "the work folder /x is not usable: ENOTDIR", by: "w-bad" },
    });
    expect(Date.parse(row?.handedBack?.at ?? "")).not.toBeNaN();
    expect(await b.unfinished()).toBe(1);
    // Handed back twice: counted; the last reason and worker are the ones kept.
    const second = await b.claim("w-other", 60_000);
    if (!second) throw new Error("no claim");
    expect(second.job).toMatchObject({ attempts: 2, runId: "run-4" });
    expect(await b.handBack(jobId, second.token, "bubblewrap (bwrap) is not installed")).toBe(true);
    expect((await a.find({ jobId }))?.handedBack).toMatchObject({
      times: 2,
      reason: "bubblewrap (bwrap) is not installed",
      by: "w-other",
    });
    // Finished by a third: the history stays with the job.
    const third = await a.claim("w-good", 60_000);
    if (!third) throw new Error("no claim");
    expect(await a.finish(jobId, third.token, "SUCCESS")).toBe(true);
    expect((await a.find({ jobId }))?.handedBack?.times).toBe(2);
  });

  it("only the live holder may hand it back", async () => {
    const [a, b] = await queues(2);
    if (!a || !b) throw new Error("no queue");
    const { jobId } = await a.submit(job(5));
    const claim = await a.claim("a", 60_000);
    if (!claim) throw new Error("no claim");
    expect(await b.handBack(jobId, "0".repeat(32), "not mine")).toBe(false);
    expect(await a.finish(jobId, claim.token, "SUCCESS")).toBe(true);
    expect(await a.handBack(jobId, claim.token, "too late")).toBe(false);
    expect((await a.find({ jobId }))?.handedBack).toBeNull();
  });

  it("a queue written before hand-backs existed (schema 5) is migrated: its jobs read as never handed back", async () => {
    const pgSchema = freshSchema();
    const before = await PostgresEventStore.open(db.url, { pgSchema });
    const { jobId } = await before.queue().submit(job(6));
    await before.close();
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    try {
      await admin.query(`ALTER TABLE ${pgSchema}.run_queue DROP COLUMN handbacks, DROP COLUMN handback_reason,
        DROP COLUMN handback_by, DROP COLUMN handback_at`);
      await admin.query(`ALTER TABLE ${pgSchema}.workers DROP COLUMN seen_at, DROP COLUMN beat_ms`);
      await admin.query(`DROP TRIGGER run_queue_notify ON ${pgSchema}.run_queue`);
      await admin.query(`DROP FUNCTION ${pgSchema}.run_queue_notify`);
      await admin.query(`DELETE FROM ${pgSchema}.migrations WHERE version >= 6`);
    } finally {
      await admin.end();
    }
    const after = await PostgresEventStore.open(db.url, { pgSchema });
    stores.push(after);
    const q = after.queue();
    expect(await q.find({ jobId })).toMatchObject({ state: "queued", handedBack: null });
    const c = await q.claim("w", 60_000);
    if (!c) throw new Error("no claim");
    expect(await q.handBack(jobId, c.token, "why")).toBe(true);
    expect((await q.find({ jobId }))?.handedBack).toMatchObject({ times: 1, reason: "why", by: "w" });
  });

  it("a worker's heartbeat interval and its last heartbeat are kept for `workers` to judge it", async () => {
    const [a] = await queues(1);
    if (!a) throw new Error("no queue");
    await a.announceWorker({ workerId: "w-beat", host: "h", pid: 7, concurrency: 1, beatMs: 1_000 }, 60_000);
    await a.announceWorker({ workerId: "w-old", host: "h", pid: 8, concurrency: 1 }, 60_000);
    const now = await a.now();
    const live = await a.liveWorkers();
    const beat = live.find((l) => l.worker.workerId === "w-beat")?.worker;
    expect(beat?.beatMs).toBe(1_000);
    // The last heartbeat is the database's now() of the announce: not after this read of it.
    expect(Date.parse(beat?.seenAt ?? "")).toBeLessThanOrEqual(now.getTime());
    expect(live.find((l) => l.worker.workerId === "w-old")?.worker.beatMs).toBeNull();
  });
});
