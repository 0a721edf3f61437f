// Goal turns on the run queue (real PostgreSQL): one queued turn per goal, moved only earlier; a turn
// whose not_before lies ahead is passed over by claims until then; concurrent enqueues of one goal
// insert one job; goalOfJob tells a goal turn from a run.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresEventStore } from "../../../src/store/postgres/postgres-event-store.js";
import { goalOfJob, type PostgresRunQueue } from "../../../src/store/postgres/run-queue.js";
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

async function queue(): Promise<PostgresRunQueue> {
  const store = await PostgresEventStore.open(db.url, { pgSchema: freshSchema(), maxConnections: 4 });
  stores.push(store);
  return store.queue();
}

const inSeconds = async (q: PostgresRunQueue, s: number) =>
  new Date((await q.now()).getTime() + s * 1000).toISOString();

describe("goal turns on the run queue", () => {
  it("one queued turn per goal: a second enqueue keeps it (host_match), an earlier one moves it (host_updated)", async () => {
    const q = await queue();
    const later = await inSeconds(q, 3600);
    const first = await q.submitGoalTurn("g1", { cwd: "/x" }, later);
    expect(first.mode).toBe("host_updated");
    expect(first.job.taskPath).toBe("goal:g1");
    expect(goalOfJob(first.job)).toBe("g1");
    const same = await q.submitGoalTurn("g1", { cwd: "/x" }, await inSeconds(q, 7200));
    expect(same).toMatchObject({ mode: "host_match", job: { jobId: first.job.jobId } });
    expect(same.job.options.not_before).toBe(later);
    const now = await q.submitGoalTurn("g1", { cwd: "/x" }, null);
    expect(now).toMatchObject({ mode: "host_updated", job: { jobId: first.job.jobId } });
    expect(now.job.options.not_before).toBeUndefined();
    // Another goal has its own turn; a run is no goal turn.
    const other = await q.submitGoalTurn("g2", {}, null);
    expect(other.job.jobId).not.toBe(first.job.jobId);
    const run = await q.submit({ taskPath: "/t/task.yaml", taskDigest: "d", options: {} });
    expect(goalOfJob(run)).toBeNull();
    expect((await q.list({ unfinished: true })).length).toBe(3);
  });

  it("a turn not due yet is passed over by claims (a run behind it is claimed), and a due one is claimed", async () => {
    const q = await queue();
    const due = await q.submitGoalTurn("g-later", {}, await inSeconds(q, 3600));
    const run = await q.submit({ taskPath: "/t/task.yaml", taskDigest: "d", options: {} });
    const c1 = await q.claim("w1", 60_000);
    expect(c1?.job.jobId).toBe(run.jobId);
    expect(await q.claim("w2", 60_000)).toBeNull();
    // Moved to now: claimable.
    await q.submitGoalTurn("g-later", {}, null);
    const c2 = await q.claim("w2", 60_000);
    expect(c2?.job.jobId).toBe(due.job.jobId);
  });

  it("a claimed turn does not count: the next turn of its goal is a new job (the scheduler's wake-up)", async () => {
    const q = await queue();
    const t1 = await q.submitGoalTurn("g3", {}, null);
    const c = await q.claim("w", 60_000);
    expect(c?.job.jobId).toBe(t1.job.jobId);
    const t2 = await q.submitGoalTurn("g3", {}, null);
    expect(t2.mode).toBe("host_updated");
    expect(t2.job.jobId).not.toBe(t1.job.jobId);
  });

  it("8 concurrent enqueues of one goal queue exactly one turn", async () => {
    const q = await queue();
    const all = await Promise.all(Array.from({ length: 8 }, () => q.submitGoalTurn("g4", {}, null)));
    expect(new Set(all.map((r) => r.job.jobId)).size).toBe(1);
    expect(all.filter((r) => r.mode === "host_updated").length).toBe(1);
    expect((await q.list()).filter((j) => j.taskPath === "goal:g4").length).toBe(1);
  });

  it("a not_before that is not a time is refused, naming it; nothing is queued", async () => {
    const q = await queue();
    await expect(q.submitGoalTurn("g5", {}, "tomorrow")).rejects.toThrow(/not a time: "tomorrow"/);
    expect(await q.list()).toEqual([]);
  });
});
