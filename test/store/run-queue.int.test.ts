// The run queue on real PostgreSQL: SKIP LOCKED claims are exclusive under a race of separate
// connections, and every right (heartbeat, run id, finish, release) belongs to a live claim's token.
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresEventStore } from "../../src/store/postgres-event-store.js";
import type { PostgresRunQueue } from "../../src/store/run-queue.js";
import { type FreshDatabase, freshDatabase, freshSchema } from "../support/postgres.js";

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
