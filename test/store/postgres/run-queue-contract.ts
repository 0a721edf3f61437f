import { setTimeout as sleep } from "node:timers/promises";
import type pg from "pg";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { WakePolicy } from "../../../src/store/kernel/queue-policy.js";
import type { QueueListener } from "../../../src/store/postgres/queue-listener.js";
import type { PostgresRunQueue } from "../../../src/store/postgres/run-queue.js";

/** One fresh, empty queue for one test, and the means to reach it from outside. */
export interface QueueUnderTest {
  /** `n` handles on the same queue, each through its own connections (separate claimers). */
  queues(n: number): Promise<PostgresRunQueue[]>;
  /** A handle on another, empty queue in the same database (its notifications must not wake this one's). */
  neighbour(): Promise<PostgresRunQueue>;
  /** A listener on this queue (closed by cleanup). */
  listen(policy?: WakePolicy): QueueListener;
  /** Ends every listening connection from the server's side, as a restart or a cut network would. */
  cutListeners(): Promise<number>;
  /** A plain connection to the queue's database, and the schema its tables are in (closed by cleanup). */
  raw(): Promise<{ client: pg.Client; schema: string }>;
  cleanup(): Promise<void>;
}

export type OpenQueue = () => Promise<QueueUnderTest>;

/** The poll a notify test waits with: a wake well before it can only be the notification. */
const LONG_POLL_MS = 30_000;
/** The bound a notification must wake a waiter within (generous: other tests share the CPUs). */
const WAKE_BOUND_MS = 10_000;

const job = (i: number) => ({ taskPath: `/tasks/t${i}/task.yaml`, taskDigest: `d${i}`, options: { n: i } });

async function one(ref: { q: QueueUnderTest }): Promise<PostgresRunQueue> {
  const [q] = await ref.q.queues(1);
  if (!q) throw new Error("no queue");
  return q;
}

/** Retries `claim` until it returns a job or `boundMs` passes (then null). */
async function claimWithin(q: PostgresRunQueue, worker: string, leaseMs: number, boundMs: number) {
  const until = Date.now() + boundMs;
  for (;;) {
    const c = await q.claim(worker, leaseMs);
    if (c || Date.now() > until) return c;
    await sleep(50);
  }
}

/** A listener in place with nothing pending (its first LISTEN rings once; that ring is consumed here). */
async function idleListener(ref: { q: QueueUnderTest }): Promise<QueueListener> {
  const l = ref.q.listen();
  await l.listening();
  expect(await l.wait(0)).toBe("notified");
  return l;
}

/** Starts a long wait, does `act` a little later, and returns why and after how long the wait ended. */
async function wakeBy(
  l: QueueListener,
  act: () => Promise<unknown>,
): Promise<{ reason: string; ms: number }> {
  const waiting = l.wait(LONG_POLL_MS);
  await sleep(100);
  const t0 = performance.now();
  await act();
  const reason = await waiting;
  return { reason, ms: Math.round(performance.now() - t0) };
}

/**
 * The behaviour of the run queue: exclusive claims, leases, giving a job back, finishing, the goal turn's
 * delay and one-per-goal rule, and the wake-up of idle claimers by notification.
 */
export function runQueueContract(name: string, open: OpenQueue): void {
  describe(`run queue contract: ${name}`, () => {
    const ref = {} as { q: QueueUnderTest };
    beforeEach(async () => {
      ref.q = await open();
    });
    afterEach(async () => {
      await ref.q.cleanup();
    });
    claimContract(ref);
    leaseContract(ref);
    givingBackContract(ref);
    goalTurnContract(ref);
    wakeContract(ref);
  });
}

function claimContract(ref: { q: QueueUnderTest }): void {
  describe("claims", () => {
    it("hands jobs out oldest first, each once, then nothing", async () => {
      const q = await one(ref);
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) ids.push((await q.submit(job(i))).jobId);
      const got: string[] = [];
      for (let i = 0; i < 5; i++) got.push((await q.claim("w", 60_000))?.job.jobId ?? "none");
      expect(got).toEqual(ids);
      expect(await q.claim("w", 60_000)).toBeNull();
    });

    it("6 claimers on their own connections share 90 jobs: each claimed exactly once, none lost", async () => {
      const qs = await ref.q.queues(6);
      const [first] = qs;
      if (!first) throw new Error("no queue");
      const submitted = new Set<string>();
      for (let i = 0; i < 90; i++) submitted.add((await first.submit(job(i))).jobId);
      const claims = new Map<string, string[]>();
      await Promise.all(
        qs.map(async (q, w) => {
          for (;;) {
            const c = await q.claim(`w${w}`, 60_000);
            if (!c) return;
            claims.set(c.job.jobId, [...(claims.get(c.job.jobId) ?? []), `w${w}`]);
            expect(await q.finish(c.job.jobId, c.token, "SUCCESS")).toBe(true);
          }
        }),
      );
      expect(new Set(claims.keys())).toEqual(submitted);
      expect([...claims.entries()].filter(([, by]) => by.length !== 1)).toEqual([]);
      const rows = await first.list();
      expect(rows.filter((r) => r.state !== "finished" || r.attempts !== 1)).toEqual([]);
    });

    it("one job and 6 claimers racing for it: exactly one gets it", async () => {
      const qs = await ref.q.queues(6);
      await qs[0]?.submit(job(0));
      const got = await Promise.all(qs.map((q, w) => q.claim(`w${w}`, 60_000)));
      expect(got.filter((c) => c !== null)).toHaveLength(1);
    });

    it("refuses a lease outside 100 ms to 24 h", async () => {
      const q = await one(ref);
      await q.submit(job(0));
      await expect(q.claim("w", 99)).rejects.toThrow(/100 ms to 24 h/);
      await expect(q.claim("w", 86_400_001)).rejects.toThrow(/100 ms to 24 h/);
      expect((await q.list())[0]?.state).toBe("queued");
    });
  });
}

function leaseContract(ref: { q: QueueUnderTest }): void {
  describe("leases", () => {
    it("a lease that runs out lets another claimer take the job, and every right of the old token ends", async () => {
      const [a, b] = await ref.q.queues(2);
      if (!a || !b) throw new Error("no queue");
      const { jobId } = await a.submit(job(0));
      const old = await a.claim("a", 1000);
      expect(old?.job.jobId).toBe(jobId);
      expect(await b.claim("b", 60_000)).toBeNull(); // held live
      const taken = await claimWithin(b, "b", 60_000, WAKE_BOUND_MS);
      expect(taken?.job.jobId).toBe(jobId);
      expect(taken?.job.attempts).toBe(2);
      expect(taken?.token).not.toBe(old?.token);
      const token = old?.token ?? "";
      expect(await a.heartbeat(jobId, token, 60_000)).toBeNull();
      expect(await a.setRunId(jobId, token, "run-x")).toBe(false);
      expect(await a.finish(jobId, token, "SUCCESS")).toBe(false);
      expect(await a.release(jobId, token)).toBe(false);
      expect(await a.handBack(jobId, token, "late")).toBe(false);
      expect(await b.finish(jobId, taken?.token ?? "", "SUCCESS")).toBe(true);
      expect((await a.find({ jobId }))?.status).toBe("SUCCESS");
    });

    it("a heartbeat keeps the lease: nobody else can claim the job while it is renewed", async () => {
      const [a, b] = await ref.q.queues(2);
      if (!a || !b) throw new Error("no queue");
      const { jobId } = await a.submit(job(0));
      const c = await a.claim("a", 2000);
      expect(await a.heartbeat(jobId, c?.token ?? "", 60_000)).not.toBeNull();
      await sleep(2500);
      expect(await b.claim("b", 60_000)).toBeNull();
      expect(await a.finish(jobId, c?.token ?? "", "SUCCESS")).toBe(true);
    });
  });
}

function givingBackContract(ref: { q: QueueUnderTest }): void {
  describe("giving a job back, and finishing it", () => {
    it("release: queued again with its run id, and the next claim resumes it", async () => {
      const [a, b] = await ref.q.queues(2);
      if (!a || !b) throw new Error("no queue");
      const { jobId } = await a.submit(job(0));
      const c = await a.claim("a", 60_000);
      expect(await a.setRunId(jobId, c?.token ?? "", "run-1")).toBe(true);
      expect(await a.release(jobId, c?.token ?? "")).toBe(true);
      const again = await b.claim("b", 60_000);
      expect([again?.job.jobId, again?.job.runId, again?.job.attempts]).toEqual([jobId, "run-1", 2]);
    });

    it("hand-back: queued again with the reason, the worker and a count", async () => {
      const q = await one(ref);
      const { jobId } = await q.submit(job(0));
      for (const [w, reason] of [
        ["w1", "no sandbox"],
        ["w2", "disk full"],
      ] as const) {
        const c = await q.claim(w, 60_000);
        expect(await q.handBack(jobId, c?.token ?? "", reason)).toBe(true);
      }
      const row = await q.find({ jobId });
      expect(row?.state).toBe("queued");
      expect(row?.handedBack).toMatchObject({ times: 2, reason: "disk full", by: "w2" });
      expect((await q.claim("w3", 60_000))?.job.jobId).toBe(jobId);
    });

    it("finished is terminal: never claimed again, never finished twice", async () => {
      const q = await one(ref);
      const { jobId } = await q.submit(job(0));
      const c = await q.claim("w", 60_000);
      expect(await q.finish(jobId, c?.token ?? "", "ESCALATED")).toBe(true);
      expect(await q.finish(jobId, c?.token ?? "", "SUCCESS")).toBe(false);
      expect(await q.claim("w", 60_000)).toBeNull();
      expect(await q.find({ jobId })).toMatchObject({ state: "finished", status: "ESCALATED" });
      expect(await q.unfinished()).toBe(0);
    });
  });
}

function goalTurnContract(ref: { q: QueueUnderTest }): void {
  describe("goal turns: a delay and one queued turn per goal", () => {
    it("a turn whose not_before is ahead is passed over, then claimed once it comes", async () => {
      const q = await one(ref);
      const at = new Date((await q.now()).getTime() + 4000).toISOString();
      const turn = await q.submitGoalTurn("g1", {}, at);
      const run = await q.submit(job(0));
      expect((await q.claim("w", 60_000))?.job.jobId).toBe(run.jobId);
      expect(await q.claim("w", 60_000)).toBeNull();
      const c = await claimWithin(q, "w", 60_000, WAKE_BOUND_MS);
      expect(c?.job.jobId).toBe(turn.job.jobId);
      expect((await q.now()).getTime()).toBeGreaterThanOrEqual(Date.parse(at));
    });

    it("8 enqueues of one goal racing on 4 connections leave one queued turn, at the earliest time asked", async () => {
      const qs = await ref.q.queues(4);
      const now = (await qs[0]?.now())?.getTime() ?? 0;
      const times = [9, 4, 7, 2, 8, 5, 3, 6].map((m) => new Date(now + m * 60_000).toISOString());
      await Promise.all(times.map((t, i) => qs[i % qs.length]?.submitGoalTurn("g1", {}, t)));
      const rows = (await qs[0]?.list())?.filter((r) => r.taskPath === "goal:g1") ?? [];
      expect(rows).toHaveLength(1);
      expect(rows[0]?.options.not_before).toBe([...times].sort()[0]);
      const later = await qs[0]?.submitGoalTurn("g1", {}, times[0] ?? null);
      expect(later?.mode).toBe("host_match");
      const now2 = await qs[0]?.submitGoalTurn("g1", {}, null);
      expect(now2?.mode).toBe("host_updated");
      expect(now2?.job.options.not_before).toBeUndefined();
    });

    it("a claimed turn does not count: the next one is queued beside it", async () => {
      const q = await one(ref);
      await q.submitGoalTurn("g1", {}, null);
      const c = await q.claim("w", 60_000);
      const next = await q.submitGoalTurn("g1", {}, null);
      expect(next.job.jobId).not.toBe(c?.job.jobId);
      expect((await q.list({ unfinished: true })).map((j) => j.state)).toEqual(["claimed", "queued"]);
    });
  });
}

function wakeContract(ref: { q: QueueUnderTest }): void {
  describe("idle claimers wake on notification", () => {
    it(`an enqueue wakes a claimer waiting with a ${LONG_POLL_MS} ms poll, and the job is there to claim`, async () => {
      const [q] = await ref.q.queues(1);
      if (!q) throw new Error("no queue");
      const l = await idleListener(ref);
      let id = "";
      const woke = await wakeBy(l, async () => {
        id = (await q.submit(job(0))).jobId;
      });
      console.info(`run queue wake on enqueue: ${woke.ms} ms (${woke.reason})`);
      expect(woke.reason).toBe("notified");
      expect(woke.ms).toBeLessThan(WAKE_BOUND_MS);
      expect((await q.claim("w", 60_000))?.job.jobId).toBe(id);
    });

    it("a release and a hand-back wake a waiting claimer too", async () => {
      const [a, b] = await ref.q.queues(2);
      if (!a || !b) throw new Error("no queue");
      const { jobId } = await a.submit(job(0));
      const l = await idleListener(ref);
      const c1 = await a.claim("a", 60_000);
      const released = await wakeBy(l, () => a.release(jobId, c1?.token ?? ""));
      const c2 = await b.claim("b", 60_000);
      expect(c2?.job.jobId).toBe(jobId);
      const handed = await wakeBy(l, () => b.handBack(jobId, c2?.token ?? "", "no sandbox"));
      console.info(`run queue wake on release: ${released.ms} ms; on hand-back: ${handed.ms} ms`);
      expect([released.reason, handed.reason]).toEqual(["notified", "notified"]);
      expect(Math.max(released.ms, handed.ms)).toBeLessThan(WAKE_BOUND_MS);
      expect((await a.claim("a", 60_000))?.job.jobId).toBe(jobId);
    });

    it("a notification while nobody waits is kept: the next wait returns at once", async () => {
      const q = await one(ref);
      const l = await idleListener(ref);
      await q.submit(job(0));
      const seen = Date.now() + WAKE_BOUND_MS;
      while (l.snapshot().notifications === 0 && Date.now() < seen) await sleep(20);
      const t0 = performance.now();
      expect(await l.wait(LONG_POLL_MS)).toBe("notified");
      expect(performance.now() - t0).toBeLessThan(WAKE_BOUND_MS);
    });

    it("an uncommitted enqueue wakes nobody; its commit does, and the row is visible then", async () => {
      const { client, schema } = await ref.q.raw();
      const q = await one(ref);
      const l = await idleListener(ref);
      await client.query("BEGIN");
      await client.query(
        `INSERT INTO ${schema}.run_queue (job_id, task_path, task_digest, options, state)
         VALUES ('job-uncommitted', '/t/task.yaml', 'd', '{}', 'queued')`,
      );
      expect(await l.wait(1000)).toBe("timeout");
      const woke = await wakeBy(l, () => client.query("COMMIT"));
      expect(woke.reason).toBe("notified");
      expect((await q.claim("w", 60_000))?.job.jobId).toBe("job-uncommitted");
    });

    it("finishing a job and another schema's enqueue wake nobody", async () => {
      const q = await one(ref);
      const other = await ref.q.neighbour();
      const { jobId } = await q.submit(job(0));
      const c = await q.claim("w", 60_000);
      const l = await idleListener(ref);
      await q.finish(jobId, c?.token ?? "", "SUCCESS");
      await other.submit(job(1));
      expect(await l.wait(1500)).toBe("timeout");
      expect(l.snapshot().notifications).toBe(0);
    });

    it("a cut listening connection is opened again; what was enqueued meanwhile wakes the waiter", async () => {
      const q = await one(ref);
      const l = ref.q.listen({ idlePollMs: LONG_POLL_MS, reconnectFirstMs: 200, reconnectMaxMs: 1000 });
      await l.listening();
      await l.wait(0);
      expect(await ref.q.cutListeners()).toBeGreaterThanOrEqual(1);
      const { jobId } = await q.submit(job(0)); // most likely while nobody listens
      const t0 = performance.now();
      expect(await l.wait(LONG_POLL_MS)).toBe("notified");
      const until = Date.now() + WAKE_BOUND_MS;
      while (l.snapshot().state !== "listening" && Date.now() < until) await sleep(20);
      const back = Math.round(performance.now() - t0);
      expect(l.snapshot()).toMatchObject({ state: "listening", listens: 2 });
      expect((await q.claim("w", 60_000))?.job.jobId).toBe(jobId);
      // And it listens again: a later enqueue wakes it as before.
      await l.wait(0);
      const woke = await wakeBy(l, () => q.submit(job(1)));
      console.info(`run queue listener back after a cut in ${back} ms; next wake ${woke.ms} ms`);
      expect(woke.reason).toBe("notified");
      expect(woke.ms).toBeLessThan(WAKE_BOUND_MS);
    });
  });
}
