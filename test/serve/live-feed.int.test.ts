import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LoopgateEvent } from "../../src/core/events/loopgate-event.js";
import { type LogChange, LogWatcher, lastPosition } from "../../src/serve/live-feed.js";
import type { EventStore } from "../../src/store/kernel/event-store.js";
import { PostgresEventStore } from "../../src/store/postgres/postgres-event-store.js";
import { SqliteEventStore } from "../../src/store/sqlite/sqlite-event-store.js";
import { type FreshDatabase, freshDatabase, freshSchema } from "../support/postgres.js";
import { attempt, pristine, started } from "../support/run-events.js";

// The board's live feed follows the log's position the same way on SQLite and on PostgreSQL.
const temps: string[] = [];
let db: FreshDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(async () => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
  await db?.drop();
});

const stored = (bodies: { type: string; data: unknown }[]): LoopgateEvent[] =>
  bodies.map(
    (b) =>
      ({
        ...b,
        id: randomUUID(),
        meta: { at: new Date().toISOString(), origin: "runtime" },
      }) as LoopgateEvent,
  );
const run = () => stored([started(["g"]), pristine(), attempt(1)]);
/** The last position by reading the whole log: the rule lastPosition must agree with. */
const readToEnd = async (s: EventStore) => (await s.readAll()).reduce((m, e) => Math.max(m, e.position), -1);

const stores: [string, () => Promise<EventStore>][] = [
  [
    "sqlite",
    async () => {
      const dir = mkdtempSync(join(tmpdir(), "loopgate-live-"));
      temps.push(dir);
      return SqliteEventStore.open(join(dir, "events.db"));
    },
  ],
  ["postgres", () => PostgresEventStore.open(db.url, { pgSchema: freshSchema(), maxConnections: 2 })],
];

for (const [name, open] of stores)
  describe(`the live feed on ${name}`, () => {
    it("finds the log's last position without reading the log: -1 when empty, then the last append's", async () => {
      const store = await open();
      try {
        expect(await lastPosition(store)).toBe(-1);
        for (let i = 0; i < 37; i++) {
          await store.append(`run-${i}`, run(), "no_stream");
          expect(await lastPosition(store)).toBe(await readToEnd(store));
        }
      } finally {
        await store.close();
      }
    });

    it("tells its listeners which streams moved and the new position, once per change", async () => {
      const store = await open();
      // A poll interval no test waits for: each poll is called by the test itself.
      const watcher = new LogWatcher(store, { pollMs: 3_600_000, batch: 2 });
      try {
        await store.append("run-before", run(), "no_stream");
        await watcher.start();
        expect(watcher.position).toBe(await readToEnd(store));
        const seen: LogChange[] = [];
        watcher.subscribe((c) => seen.push(c));
        await watcher.poll();
        expect(seen).toEqual([]);
        await store.append("run-a", run(), "no_stream");
        await store.append("run-b", run(), "no_stream");
        await store.append("run-c", run(), "no_stream");
        await watcher.poll();
        expect(seen).toHaveLength(1);
        expect(seen[0]?.position).toBe(await readToEnd(store));
        expect(new Set(seen[0]?.streams)).toEqual(new Set(["run-a", "run-b", "run-c"]));
        await watcher.poll();
        expect(seen).toHaveLength(1);
      } finally {
        watcher.stop();
        await store.close();
      }
    });
  });
