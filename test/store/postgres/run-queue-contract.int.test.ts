// The run queue contract (run-queue-contract.ts) against PostgreSQL: each test gets an empty schema of
// its own inside this file's database.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresEventStore } from "../../../src/store/postgres/postgres-event-store.js";
import { QueueListener } from "../../../src/store/postgres/queue-listener.js";
import { type FreshDatabase, freshDatabase, freshSchema } from "../../support/postgres.js";
import { runQueueContract } from "./run-queue-contract.js";

let db: FreshDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(async () => {
  await db?.drop();
});

runQueueContract("PostgreSQL", async () => {
  const pgSchema = freshSchema();
  const stores: PostgresEventStore[] = [];
  const listeners: QueueListener[] = [];
  const clients: pg.Client[] = [];
  const open = async (schema: string) => {
    const store = await PostgresEventStore.open(db.url, { pgSchema: schema, maxConnections: 2 });
    stores.push(store);
    return store.queue();
  };
  const client = async () => {
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    clients.push(c);
    return c;
  };
  return {
    async queues(n) {
      const out = [];
      for (let i = 0; i < n; i++) out.push(await open(pgSchema));
      return out;
    },
    neighbour: () => open(freshSchema()),
    listen(policy) {
      const l = QueueListener.start({ url: db.url, pgSchema, ...(policy ? { policy } : {}) });
      listeners.push(l);
      return l;
    },
    async cutListeners() {
      const c = await client();
      const r = await c.query(
        `SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity
         WHERE datname = current_database() AND application_name = 'loopgate-queue-listener'`,
      );
      return Number(r.rows[0]?.n ?? 0);
    },
    async raw() {
      await open(pgSchema); // the schema exists before the caller writes into it
      return { client: await client(), schema: pgSchema };
    },
    async cleanup() {
      await Promise.all(listeners.map((l) => l.close()));
      await Promise.all(clients.map((c) => c.end().catch(() => {})));
      await Promise.all(stores.map((s) => s.close()));
    },
  };
});

describe("the queue listener without a server", () => {
  it("keeps retrying with a bounded backoff, and every wait still ends at its poll", async () => {
    // Port 1 on loopback: nothing listens there, so every connect is refused at once.
    const l = QueueListener.start({
      url: "postgres://postgres@127.0.0.1:1/none",
      pgSchema: "loopgate",
      policy: { idlePollMs: 200, reconnectFirstMs: 20, reconnectMaxMs: 80 },
    });
    try {
      const t0 = performance.now();
      expect(await l.wait(200)).toBe("timeout");
      expect(performance.now() - t0).toBeGreaterThanOrEqual(190);
      const until = Date.now() + 10_000;
      while (l.snapshot().failures < 3 && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
      expect(l.snapshot()).toMatchObject({
        state: expect.stringMatching(/^(retrying|connecting)$/),
        listens: 0,
      });
      expect(l.snapshot().failures).toBeGreaterThanOrEqual(3);
      expect(l.snapshot().lastError).toMatch(/ECONNREFUSED|connect/i);
    } finally {
      await l.close();
    }
    expect(l.snapshot().state).toBe("closed");
    expect(await l.wait(60_000)).toBe("aborted");
  });
});
