import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { LoopgateEvent } from "../../../src/core/events/loopgate-event.js";
import { ConcurrencyError } from "../../../src/core/kernel/errors.js";
import { type StreamFold, StreamJournal } from "../../../src/runner/stream/stream-journal.js";
import type { EventStore } from "../../../src/store/kernel/event-store.js";
import { SqliteEventStore } from "../../../src/store/sqlite/sqlite-event-store.js";

// The stream journal on a real SQLite store in a temp folder. The stream's events are lease renewals whose
// token names what the writer saw ("a0" … the count of events before it), so a decision made on a stale
// state and one made on the re-read state store different tokens.

const temps: string[] = [];
afterAll(() => {
  for (const t of temps) rmSync(t, { recursive: true, force: true });
});

function newStore(): EventStore {
  const dir = mkdtempSync(join(tmpdir(), "lg-stream-journal-"));
  temps.push(dir);
  return SqliteEventStore.open(join(dir, "events.sqlite"));
}

let ids = 0;
const renewal = (token: string): LoopgateEvent =>
  ({
    id: `ev-${++ids}`,
    type: "run_lease_renewed",
    data: { token, expires_at: "2026-01-01T00:00:00.000Z" },
    meta: { at: "2026-01-01T00:00:00.000Z", origin: "runtime" },
  }) as LoopgateEvent;

/** The tokens in stream order; `folds` counts evolve calls (to tell an incremental fold from a re-fold). */
function tokenFold(): StreamFold<string[]> & { folds: number } {
  const f = {
    folds: 0,
    initialState: (): string[] => [],
    evolve: (s: string[], e: LoopgateEvent): string[] => {
      f.folds++;
      return e.type === "run_lease_renewed" ? [...s, e.data.token] : s;
    },
  };
  return f;
}

/** A decision that names the state it was made on. */
const next =
  (writer: string) =>
  (s: string[]): LoopgateEvent[] => [renewal(`${writer}${s.length}`)];

const storedTokens = async (store: EventStore, stream: string) =>
  (await store.readStream(stream)).map((e) => (e.type === "run_lease_renewed" ? e.data.token : "?"));

describe("StreamJournal", () => {
  it("folds every append into the kept state: the state equals a full fold of the stored stream, each event folded once", async () => {
    const store = newStore();
    const fold = tokenFold();
    const j = new StreamJournal({ store, stream: "run-s1", fold });
    await j.read();
    for (let i = 0; i < 5; i++) await j.append(next("a"));
    expect(j.state).toEqual(["a0", "a1", "a2", "a3", "a4"]);
    expect(j.state).toEqual(await storedTokens(store, "run-s1"));
    expect(j.revision).toBe(4);
    expect(fold.folds).toBe(5);
    // A second journal reading the same stream from scratch reaches the same state.
    const again = new StreamJournal({ store, stream: "run-s1", fold: tokenFold() });
    expect(await again.read()).toEqual(j.state);
  });

  it("a concurrent writer forces a re-read of what it wrote and a new decision on it", async () => {
    const store = newStore();
    const a = new StreamJournal({ store, stream: "run-s2", fold: tokenFold(), retries: 2 });
    const b = new StreamJournal({ store, stream: "run-s2", fold: tokenFold() });
    await a.append(next("a"));
    await b.read();
    await b.append(next("b"));
    const seen: string[][] = [];
    await a.append((s) => {
      seen.push([...s]);
      return next("a")(s);
    });
    // Decided first on its stale state, then again on the stream with b's event.
    expect(seen).toEqual([["a0"], ["a0", "b1"]]);
    expect(await storedTokens(store, "run-s2")).toEqual(["a0", "b1", "a2"]);
    expect(a.state).toEqual(["a0", "b1", "a2"]);
  });

  it("without retries a lost race is the store's ConcurrencyError and nothing is written", async () => {
    const store = newStore();
    const a = new StreamJournal({ store, stream: "run-s3", fold: tokenFold() });
    const b = new StreamJournal({ store, stream: "run-s3", fold: tokenFold() });
    await a.append(next("a"));
    await b.read();
    await b.append(next("b"));
    await expect(a.append(next("a"))).rejects.toBeInstanceOf(ConcurrencyError);
    expect(await storedTokens(store, "run-s3")).toEqual(["a0", "b1"]);
  });

  it("gives up after the bounded number of re-decisions", async () => {
    const store = newStore();
    // Every write of this journal loses: another writer's event lands just before it.
    const a = new StreamJournal({
      store,
      stream: "run-s4",
      fold: tokenFold(),
      retries: 2,
      write: async (events, expected) => {
        await store.append("run-s4", [renewal("other")], "any");
        return (await store.append("run-s4", events, expected)).lastRevision;
      },
    });
    let decisions = 0;
    const racing = a.append((s) => {
      decisions++;
      return next("a")(s);
    });
    await expect(racing).rejects.toBeInstanceOf(ConcurrencyError);
    expect(decisions).toBe(3);
    expect(await storedTokens(store, "run-s4")).toEqual(["other", "other", "other"]);
  });

  it("an empty decision writes nothing and tells the sink nothing", async () => {
    const store = newStore();
    const told: LoopgateEvent[][] = [];
    const j = new StreamJournal({
      store,
      stream: "run-s5",
      fold: tokenFold(),
      sink: (es) => told.push([...es]),
    });
    await j.append(next("a"));
    expect(await j.append(() => [])).toEqual([]);
    expect((await store.readStream("run-s5")).length).toBe(1);
    expect(j.revision).toBe(0);
    expect(told.length).toBe(1);
  });

  it("the sink receives exactly the appended events, batch by batch, in order", async () => {
    const store = newStore();
    const told: string[][] = [];
    const j = new StreamJournal({
      store,
      stream: "run-s6",
      fold: tokenFold(),
      sink: (es) => told.push(es.map((e) => e.id)),
    });
    const first = await j.append(() => [renewal("x"), renewal("y")]);
    const second = await j.append(next("z"));
    expect(told).toEqual([first.map((e) => e.id), second.map((e) => e.id)]);
    expect((await store.readStream("run-s6")).map((e) => e.id)).toEqual(told.flat());
  });

  it("serialises appends: ones started together are decided one after another, each on the state before it", async () => {
    const store = newStore();
    const j = new StreamJournal({ store, stream: "run-s7", fold: tokenFold() });
    // Not awaited one by one: without serialising, all would be decided on the empty state and conflict.
    await Promise.all(Array.from({ length: 6 }, () => j.append(next("p"))));
    expect(await storedTokens(store, "run-s7")).toEqual(["p0", "p1", "p2", "p3", "p4", "p5"]);
  });

  it("an append that fails does not stop the ones queued after it", async () => {
    const store = newStore();
    const j = new StreamJournal({ store, stream: "run-s8", fold: tokenFold() });
    const failing = j.append(() => {
      throw new Error("refused");
    });
    const after = j.append(next("q"));
    await expect(failing).rejects.toThrow("refused");
    await after;
    expect(await storedTokens(store, "run-s8")).toEqual(["q0"]);
  });
});
