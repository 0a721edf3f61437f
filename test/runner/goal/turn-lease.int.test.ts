import { mkdtempSync, rmSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TurnLeaseHeldError } from "../../../src/core/goal/turn/turn-lease.js";
import { appendGoal } from "../../../src/runner/goal/goal-store.js";
import { GoalJournal } from "../../../src/runner/goal/turn/goal-journal.js";
import {
  acquireTurnLease,
  keepTurnLease,
  releaseTurnLease,
} from "../../../src/runner/goal/turn/turn-lease-keeper.js";
import type { EventStore } from "../../../src/store/kernel/event-store.js";
import { PostgresEventStore } from "../../../src/store/postgres/postgres-event-store.js";
import { SqliteEventStore } from "../../../src/store/sqlite/sqlite-event-store.js";
import { created, spec } from "../../core/goal/goal-fixtures.js";
import { type FreshDatabase, freshDatabase, freshSchema } from "../../support/postgres.js";

// The goal's turn lease through the EventStore's expected revision, on SQLite and on Postgres alike.
const temps: string[] = [];
let db: FreshDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(async () => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
  await db?.drop();
});

const G = "goal_csv";
const me = (token: string) => ({ pid: process.pid, host: hostname(), token });
let t = Date.parse("2026-12-01T10:00:00.000Z");
const clock = () => new Date(t);

const stores: [string, () => Promise<{ store: EventStore; dir: string }>][] = [
  [
    "sqlite",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "loopgate-turn-lease-"));
      temps.push(dir);
      return { store: SqliteEventStore.open(join(dir, "events.db")), dir };
    },
  ],
  [
    "postgres",
    async () => ({
      store: await PostgresEventStore.open(db.url, { pgSchema: freshSchema(), maxConnections: 4 }),
      dir: tmpdir(),
    }),
  ],
];

for (const [name, open] of stores)
  describe(`turn lease on ${name}`, () => {
    async function goal() {
      const { store, dir } = await open();
      await appendGoal(store, G, created(spec()), "no_stream", () => "operator");
      return { store, journal: () => new GoalJournal(store, dir, G, clock) };
    }

    it("two ticks racing for a free goal: exactly one holds it, the other is told who and until when", async () => {
      const { store, journal } = await goal();
      const [a, b] = [journal(), journal()];
      await Promise.all([a.refresh(), b.refresh()]);
      const results = await Promise.allSettled([
        acquireTurnLease(a, "agent-a", me("tok-a"), clock),
        acquireTurnLease(b, "agent-b", me("tok-b"), clock),
      ]);
      expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
      const lost = results.find((r) => r.status === "rejected") as PromiseRejectedResult;
      expect(lost.reason).toBeInstanceOf(TurnLeaseHeldError);
      expect(String(lost.reason.message)).toMatch(
        /turn in progress by agent-[ab] \(process \d+ on .+\) until \d{4}-\d\d-\d\dT[\d:.]+Z/,
      );
      const c = journal();
      const s = await c.refresh();
      expect(s.lease?.holder).toMatch(/^agent-[ab]$/);
      await store.close();
    });

    it("heartbeats extend the lease; after expiry another owner takes over and the old holder's heartbeat is refused", async () => {
      const { store, journal } = await goal();
      const a = journal();
      await a.refresh();
      await acquireTurnLease(a, "agent-a", me("tok-a"), clock);
      const lost: unknown[] = [];
      const keeper = keepTurnLease(a, "tok-a", clock, (e) => lost.push(e), 60_000, 20);
      let beats = 0;
      for (let i = 0; i < 200 && beats < 2; i++) {
        await new Promise((r) => setTimeout(r, 20));
        beats = (await store.readStream(`goal-${G}`)).filter((e) => e.type === "turn_lease_heartbeat").length;
      }
      expect(beats).toBeGreaterThanOrEqual(2);
      keeper.stop();
      await a.append(() => []); // waits for a heartbeat already under way
      t += 61_000; // the lease ran out: nobody renewed it
      const b = journal();
      await b.refresh();
      await acquireTurnLease(b, "agent-b", me("tok-b"), clock);
      const taken = (await b.refresh()).lease;
      expect(taken?.holder).toBe("agent-b");
      // The old holder decides on its stale read; the lost write is read again and decided again: no release.
      await releaseTurnLease(a, "tok-a", "late");
      expect((await b.refresh()).lease?.holder).toBe("agent-b");
      const again = keepTurnLease(a, "tok-a", clock, (e) => lost.push(e), 60_000, 10);
      for (let i = 0; i < 200 && lost.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      again.stop();
      expect(String(lost[0])).toMatch(/no longer holds the turn lease \(agent-b/);
      // A tick that lost its lease writes no turn fact, though the re-read alone would let it through.
      a.requireLease("tok-a");
      await expect(a.append(() => created(spec()).slice(1, 1))).rejects.toThrow(
        /no longer holds the turn lease/,
      );
      await store.close();
    });
  });
