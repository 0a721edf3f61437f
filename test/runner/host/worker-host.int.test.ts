// The Worker library object over a real queue, with scripted job kinds: its states as it claims, drains
// on the first stop request and hands back on the second, and the queue's record of each job.
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { JobContext } from "../../../src/runner/host/job-context.js";
import { LocalStartError } from "../../../src/runner/host/job-start.js";
import type { RunKit } from "../../../src/runner/host/run-flags.js";
import { createWorker, type WorkerEvent, type WorkerOptions } from "../../../src/runner/host/worker-host.js";
import { QUEUE_POLICY, WAKE_POLICY } from "../../../src/store/kernel/queue-policy.js";
import { PostgresEventStore } from "../../../src/store/postgres/postgres-event-store.js";
import { type FreshDatabase, freshDatabase, freshSchema } from "../../support/postgres.js";

let db: FreshDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** The scripted jobs never build a run: a kit that is called fails the test. */
const kit: RunKit = new Proxy({} as RunKit, {
  get: (_t, name) => () => {
    throw new Error(`the scripted job called the run kit (${String(name)})`);
  },
});

async function until(what: string, ok: () => boolean | Promise<boolean>): Promise<void> {
  const end = Date.now() + 10_000;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`not within 10 s: ${what}`);
    await sleep(20);
  }
}

function options(
  store: PostgresEventStore,
  id: string,
  run: (ctx: JobContext) => Promise<{ status: string }>,
  events: WorkerEvent[],
  over: Partial<WorkerOptions> = {},
): WorkerOptions {
  return {
    store,
    url: db.url,
    label: "the test database",
    concurrency: 1,
    id,
    once: false,
    untilIdle: false,
    leaseMs: 30_000,
    workDir: undefined,
    policy: QUEUE_POLICY,
    wakePolicy: WAKE_POLICY,
    kit,
    faults: {},
    onEvent: (e) => events.push(e),
    jobs: { run, goalTurn: async () => ({ status: "unexpected goal turn" }) },
    ...over,
  };
}

const job = { taskPath: "/nowhere/task.yaml", taskDigest: "d", options: {} };

it("until idle: the job is finished with the status its kind returned, and the worker is stopped", async () => {
  const store = await PostgresEventStore.open(db.url);
  try {
    const { jobId } = await store.queue().submit(job);
    const events: WorkerEvent[] = [];
    const worker = createWorker(
      options(store, "w-idle", async () => ({ status: "SUCCESS" }), events, { untilIdle: true }),
    );
    expect(worker.state).toBe("running");
    expect(await worker.run()).toEqual({ state: "stopped" });
    expect(worker.state).toBe("stopped");
    const row = await store.queue().find({ jobId });
    expect(row?.state).toBe("finished");
    expect(row?.status).toBe("SUCCESS");
    expect(events).toContainEqual({ kind: "finished", jobId, status: "SUCCESS" });
    await expect(worker.run()).rejects.toThrow("was run already");
  } finally {
    await store.close();
  }
});

it("stop once: draining, the held job finishes; stop twice: it is interrupted and handed back", async () => {
  const store = await PostgresEventStore.open(db.url);
  try {
    // A job that runs until it is interrupted, then returns as an interrupted one does.
    const held = (ctx: JobContext) =>
      new Promise<{ status: string }>((resolve) => {
        const end = setTimeout(() => resolve({ status: "SUCCESS" }), 1500);
        ctx.signal.addEventListener("abort", () => {
          clearTimeout(end);
          resolve({ status: "TOOL_FAILURE" });
        });
      });
    const first = await store.queue().submit(job);
    const events: WorkerEvent[] = [];
    const w1 = createWorker(options(store, "w-drain", held, events));
    const done1 = w1.run();
    await until("the worker claims", () => events.some((e) => e.kind === "claimed"));
    w1.stop();
    expect(w1.state).toBe("draining");
    expect(await done1).toEqual({ state: "stopped" });
    expect((await store.queue().find({ jobId: first.jobId }))?.state).toBe("finished");

    const second = await store.queue().submit(job);
    const events2: WorkerEvent[] = [];
    const w2 = createWorker(options(store, "w-handback", held, events2));
    const done2 = w2.run();
    await until("the worker claims", () => events2.some((e) => e.kind === "claimed"));
    w2.stop();
    w2.stop();
    expect(await done2).toEqual({ state: "stopped" });
    expect(events2.map((e) => e.kind)).toEqual(
      expect.arrayContaining(["draining", "handing_back", "handed_back"]),
    );
    const row = await store.queue().find({ jobId: second.jobId });
    expect(row?.state).toBe("queued");
    expect(row?.claimedBy).toBeNull();
  } finally {
    await store.close();
  }
});

it("a job this machine cannot start, with --once, is handed back and the worker fails naming why", async () => {
  const store = await PostgresEventStore.open(db.url);
  try {
    await store.queue().submit(job);
    const events: WorkerEvent[] = [];
    const worker = createWorker(
      options(
        store,
        "w-local",
        async () => {
          throw new LocalStartError("no sandbox here");
        },
        events,
        { once: true },
      ),
    );
    const r = await worker.run();
    expect(r).toMatchObject({ state: "failed", reason: "cannot_work" });
    expect(r.state === "failed" && r.message).toContain("no sandbox here");
    expect(worker.state).toBe("failed");
    // The one job it claimed (the oldest queued: the previous test handed one back).
    const claimed = events.filter((e) => e.kind === "claimed");
    expect(claimed).toHaveLength(1);
    const jobId = claimed[0]?.kind === "claimed" ? claimed[0].jobId : "";
    expect(events).toContainEqual({ kind: "local_failure", jobId, inRow: 1, reason: "no sandbox here" });
    const row = await store.queue().find({ jobId });
    expect(row?.state).toBe("queued");
    expect(row?.handedBack?.reason).toBe("no sandbox here");
  } finally {
    await store.close();
  }
});

it("a claim lost under a running job: the heartbeat finds it, the job is interrupted and given up, never finished", async () => {
  const pgSchema = freshSchema();
  const store = await PostgresEventStore.open(db.url, { pgSchema });
  const sql = new pg.Client({ connectionString: db.url });
  await sql.connect();
  try {
    const { jobId } = await store.queue().submit(job);
    const events: WorkerEvent[] = [];
    let reason: unknown = null;
    const held = (ctx: JobContext) =>
      new Promise<{ status: string }>((resolve) => {
        ctx.signal.addEventListener("abort", () => {
          reason = ctx.signal.reason;
          resolve({ status: "TOOL_FAILURE" });
        });
      });
    const worker = createWorker(options(store, "w-lost", held, events, { once: true, leaseMs: 1500 }));
    const done = worker.run();
    await until("the worker claims", () => events.some((e) => e.kind === "claimed"));
    // Another worker's view: the claim ran out (as if this worker had stalled past its lease).
    await sql.query(
      `UPDATE ${pgSchema}.run_queue SET locked_until = now() - interval '1 second' WHERE job_id = $1`,
      [jobId],
    );
    expect(await done).toEqual({ state: "stopped" });
    expect(reason).toBe("lease lost");
    expect(events).toContainEqual({
      kind: "gave_up",
      jobId,
      why: "its lease expired before the heartbeat (another worker may hold it now)",
    });
    expect(events.some((e) => e.kind === "finished")).toBe(false);
    expect((await store.queue().find({ jobId }))?.state).toBe("claimed");
  } finally {
    await sql.end();
    await store.close();
  }
});

it("a stop request that comes while the worker is claiming ends it at once, not after its idle poll", async () => {
  // The request lands inside a claim that finds nothing: the queue's claim is wrapped so that the stop
  // comes after the database answered and before the worker goes idle. Its idle poll is 30 s (and no
  // notification will come: nothing is submitted); the bound is a third of that.
  const store = await PostgresEventStore.open(db.url, { pgSchema: freshSchema() });
  try {
    const queue = store.queue();
    let worker: ReturnType<typeof createWorker> | null = null;
    let claims = 0;
    const stopping = new Proxy(queue, {
      get: (target, name) =>
        name === "claim"
          ? async (...args: Parameters<typeof queue.claim>) => {
              const claim = await target.claim(...args);
              // The second: the first wait ends at once (an established LISTEN counts as a notification).
              if (++claims === 2) worker?.stop();
              return claim;
            }
          : Reflect.get(target, name, target),
    });
    const wrapped = new Proxy(store, {
      get: (target, name) => (name === "queue" ? () => stopping : Reflect.get(target, name, target)),
    });
    const events: WorkerEvent[] = [];
    worker = createWorker(
      options(wrapped, "w-stop-in-claim", async () => ({ status: "unexpected run" }), events, {
        leaseMs: 120_000,
        wakePolicy: { ...WAKE_POLICY, idlePollMs: 30_000 },
      }),
    );
    const t0 = performance.now();
    expect(await worker.run()).toEqual({ state: "stopped" });
    const stoppedIn = performance.now() - t0;
    expect(claims).toBe(2);
    expect(events.map((e) => e.kind)).toContain("draining");
    expect(stoppedIn, `stopped ${Math.round(stoppedIn)} ms after it started`).toBeLessThan(10_000);
  } finally {
    await store.close();
  }
});
