// `loopgate worker` in this process with a 30 s idle poll: a job submitted to the idle worker is claimed
// and finished long before that poll could have found it, so only the queue's notification woke it; and
// SIGTERM stops an idle worker at once instead of after its poll.
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, expect, it } from "vitest";
import { workerCommand } from "../../src/cli/commands/worker.js";
import type { CommandIO } from "../../src/cli/output/io.js";
import { QUEUE_POLICY } from "../../src/store/kernel/queue-policy.js";
import { PostgresEventStore } from "../../src/store/postgres/postgres-event-store.js";
import { type FreshDatabase, freshDatabase } from "../support/postgres.js";

const POLL_MS = 30_000;
/** Far under the poll, generous for a loaded machine. */
const BOUND_MS = 10_000;

let db: FreshDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(async () => {
  await db?.drop();
});

async function until(what: string, ok: () => boolean | Promise<boolean>): Promise<void> {
  const end = Date.now() + BOUND_MS;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`not within ${BOUND_MS} ms: ${what}`);
    await sleep(20);
  }
}

it("an idle worker polling every 30 s claims a submitted job at once, and stops at once on SIGTERM", async () => {
  const lines: string[] = [];
  const io: CommandIO = { out: (s) => lines.push(s), err: (s) => lines.push(s), stderr: process.stderr };
  const before = new Set(process.listeners("SIGTERM"));
  // A 120 s lease: the idle poll is the shorter of the policy's and a third of the lease, so 30 s here.
  const worker = workerCommand(io, { store: db.url, id: "w-wake", lease: "120s" }, QUEUE_POLICY, {
    idlePollMs: POLL_MS,
    reconnectFirstMs: 100,
    reconnectMaxMs: 1000,
  });
  const store = await PostgresEventStore.open(db.url);
  try {
    await until("the worker claims", () => lines.some((l) => l.includes("claiming from")));
    const onTerm = process.listeners("SIGTERM").find((l) => !before.has(l));
    if (!onTerm) throw new Error("the worker installed no SIGTERM handler");
    await sleep(500); // idle: its first claims found nothing
    const t0 = performance.now();
    // A task file that does not exist: the job is refused (finished) as soon as it is claimed.
    const { jobId } = await store.queue().submit({
      taskPath: "/nonexistent/loopgate/task.yaml",
      taskDigest: "d",
      options: {},
    });
    await until(
      "the job is finished",
      async () => (await store.queue().find({ jobId }))?.state === "finished",
    );
    const claimedIn = Math.round(performance.now() - t0);
    expect((await store.queue().find({ jobId }))?.status).toMatch(/^REFUSED: /);
    const t1 = performance.now();
    onTerm("SIGTERM");
    expect(await worker).toBe(0);
    const stoppedIn = Math.round(performance.now() - t1);
    console.info(
      `worker with a ${POLL_MS} ms poll: job finished ${claimedIn} ms after submit; stopped ${stoppedIn} ms after SIGTERM`,
    );
    expect(claimedIn).toBeLessThan(BOUND_MS);
    expect(stoppedIn).toBeLessThan(BOUND_MS);
    expect(lines.join("")).toContain(`finished ${jobId}: REFUSED`);
  } finally {
    await store.close();
  }
});
