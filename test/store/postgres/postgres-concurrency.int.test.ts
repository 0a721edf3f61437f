import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RecordedEvent } from "../../../src/core/events/loopgate-event.js";
import { ConcurrencyError } from "../../../src/core/kernel/errors.js";
import { integrityProblems, PostgresEventStore } from "../../../src/store/postgres/postgres-event-store.js";
import { type FreshDatabase, freshDatabase, freshSchema } from "../../support/postgres.js";
import { attemptStarted, batch, newStream } from "../event-fixtures.js";

const WRITERS = 8;

let db: FreshDatabase;
let pgSchema: string;
let writers: PostgresEventStore[] = [];
beforeAll(async () => {
  db = await freshDatabase();
  pgSchema = freshSchema();
  // One pool with one connection per writer: eight independent sessions, as eight processes would have.
  writers = [];
  for (let w = 0; w < WRITERS; w++)
    writers.push(await PostgresEventStore.open(db.url, { pgSchema, maxConnections: 1 }));
});
afterAll(async () => {
  await Promise.all(writers.map((s) => s.close()));
  await db?.drop();
});

const lastRevision = async (store: PostgresEventStore, stream: string) =>
  (await store.readStream(stream)).length - 1;

describe("PostgresEventStore under concurrent writers", () => {
  it("lets exactly one of eight writers win each round on the same expected revision; the others get ConcurrencyError", async () => {
    const stream = newStream();
    const rounds = 6;
    for (let round = 0; round < rounds; round++) {
      // Every writer reads the same revision (the previous round has finished), then all append at once.
      const seen = await Promise.all(writers.map((s) => lastRevision(s, stream)));
      expect(new Set(seen)).toEqual(new Set([round - 1]));
      const outcomes = await Promise.allSettled(
        writers.map((s, w) =>
          s.append(stream, [attemptStarted(`r${round}-w${w}`)], round === 0 ? "no_stream" : round - 1),
        ),
      );
      const won = outcomes.filter((o) => o.status === "fulfilled");
      const lost = outcomes.flatMap((o) => (o.status === "rejected" ? [o.reason] : []));
      expect(won).toHaveLength(1);
      expect(lost).toHaveLength(WRITERS - 1);
      for (const e of lost) {
        expect(e).toBeInstanceOf(ConcurrencyError);
        expect(e).toMatchObject({ stream, actual: round });
      }
    }
    const events = await writers[0]?.readStream(stream);
    expect(events?.map((e) => e.revision)).toEqual(Array.from({ length: rounds }, (_, i) => i));
    // One event per round, from that round.
    expect(events?.map((e) => e.id.split("-")[0])).toEqual(Array.from({ length: rounds }, (_, i) => `r${i}`));
  });

  it("loses no update when eight writers race freely with expected revisions, retrying on conflict", async () => {
    const stream = newStream();
    const perWriter = 12;
    const stats = await Promise.all(
      writers.map(async (store, w) => {
        let known = -1;
        let conflicts = 0;
        for (let i = 0; i < perWriter; ) {
          const events = [attemptStarted(`w${w}-${i}`)];
          try {
            const r = await store.append(stream, events, known === -1 ? "no_stream" : known);
            known = r.lastRevision;
            i++;
          } catch (e) {
            if (!(e instanceof ConcurrencyError)) throw e;
            conflicts++;
            known = e.actual;
          }
        }
        return conflicts;
      }),
    );
    const events = (await writers[0]?.readStream(stream)) ?? [];
    expect(events.map((e) => e.revision)).toEqual(Array.from({ length: WRITERS * perWriter }, (_, i) => i));
    const expectedIds = writers.flatMap((_, w) => Array.from({ length: perWriter }, (_, i) => `w${w}-${i}`));
    expect(events.map((e) => e.id).sort()).toEqual(expectedIds.sort());
    for (let w = 0; w < WRITERS; w++) {
      const own = events.filter((e) => e.id.startsWith(`w${w}-`)).map((e) => Number(e.id.split("-")[1]));
      expect(own).toEqual(Array.from({ length: perWriter }, (_, i) => i));
    }
    console.info(`eight free-racing writers: conflicts per writer ${JSON.stringify(stats)}`);
  });

  it("hands out global positions in commit order: a reader tailing readAll never skips one", async () => {
    const perWriter = 25;
    const seen: RecordedEvent[] = [];
    let done = false;
    const reader = writers[0] as PostgresEventStore;
    // The log's end before any writer starts: read inside the tailer, a fast first append could land
    // before it and be counted as earlier history.
    const base = (await reader.readAll()).at(-1)?.position ?? 0;
    const tail = (async () => {
      let from = base + 1;
      while (!done || (await reader.readAll({ fromPosition: from, limit: 1 })).length > 0) {
        const got = await reader.readAll({ fromPosition: from, limit: 50 });
        seen.push(...got);
        if (got.length > 0) from = (got.at(-1)?.position ?? from) + 1;
      }
    })();
    await Promise.all(
      writers.map(async (store, w) => {
        const stream = newStream(`tail${w}`);
        for (let i = 0; i < perWriter; i++) await store.append(stream, batch(1 + (i % 3)), "any");
      }),
    );
    done = true;
    await tail;
    const all = (await writers[1]?.readAll({ fromPosition: base + 1 })) ?? [];
    // The tailer, which only ever asked for positions after the last one it saw, saw everything.
    expect(seen.map((e) => e.id)).toEqual(all.map((e) => e.id));
    // Positions are contiguous: no gaps, so "after the last one seen" is the whole rest of the log.
    expect(all.map((e) => e.position)).toEqual(all.map((_, i) => base + 1 + i));
    const total =
      writers.length * Array.from({ length: perWriter }, (_, i) => 1 + (i % 3)).reduce((a, b) => a + b);
    expect(all).toHaveLength(total);
  });

  it("leaves a log whose own integrity check finds nothing after all the races above", async () => {
    expect(await integrityProblems(writers[0] as PostgresEventStore)).toEqual([]);
  });
});
