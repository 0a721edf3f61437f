import { describe, expect, it } from "vitest";
import { assortedEvents, attemptStarted, bare, batch, newId, newStream } from "./event-fixtures.js";
import type { StoreRef } from "./event-store-contract.js";

/** readStream, readAll, listStreams and the round trip of event contents. */
export function readsAndListingContract(ref: StoreRef): void {
  describe("reads and listings", () => {
    it("reads a stream from a revision, with a limit, in revision order", async () => {
      const stream = newStream();
      const events = batch(6);
      await ref.store.append(stream, events.slice(0, 2), "no_stream");
      await ref.store.append(stream, events.slice(2), 1);
      const ids = events.map((e) => e.id);
      const revisions = async (options?: { fromRevision?: number; limit?: number }) =>
        (await ref.store.readStream(stream, options)).map((e) => [e.revision, e.id]);
      expect(await revisions()).toEqual(ids.map((id, i) => [i, id]));
      expect(await revisions({ fromRevision: 2 })).toEqual(ids.slice(2).map((id, i) => [i + 2, id]));
      expect(await revisions({ fromRevision: 2, limit: 2 })).toEqual([
        [2, ids[2]],
        [3, ids[3]],
      ]);
      expect(await revisions({ limit: 1 })).toEqual([[0, ids[0]]]);
      expect(await revisions({ fromRevision: 6 })).toEqual([]);
      expect(await revisions({ limit: 0 })).toEqual([]);
      expect(await ref.store.readStream(newStream())).toEqual([]);
    });

    it("reads all streams in append order, from a position, with a limit", async () => {
      const [a, b] = [newStream("a"), newStream("b")];
      const a1 = batch(2);
      const b1 = batch(1);
      const a2 = batch(1);
      await ref.store.append(a, a1, "no_stream");
      await ref.store.append(b, b1, "no_stream");
      await ref.store.append(a, a2, 1);
      const order = [...a1, ...b1, ...a2].map((e) => e.id);
      const all = await ref.store.readAll();
      expect(all.map((e) => e.id)).toEqual(order);
      expect(all.map((e) => [e.stream, e.revision])).toEqual([
        [a, 0],
        [a, 1],
        [b, 0],
        [a, 2],
      ]);
      const positions = all.map((e) => e.position);
      for (let i = 1; i < positions.length; i++)
        expect(positions[i]).toBeGreaterThan(positions[i - 1] ?? Infinity);
      const third = all[2]?.position ?? -1;
      expect((await ref.store.readAll({ fromPosition: third })).map((e) => e.id)).toEqual(order.slice(2));
      expect((await ref.store.readAll({ fromPosition: third, limit: 1 })).map((e) => e.id)).toEqual([
        order[2],
      ]);
      const last = all[3]?.position ?? -1;
      expect(await ref.store.readAll({ fromPosition: last + 1 })).toEqual([]);
      expect((await ref.store.readAll({ limit: 2 })).map((e) => e.id)).toEqual(order.slice(0, 2));
    });

    it("lists streams most recently updated first, with revisions and first/last times", async () => {
      const run1 = "run-1";
      const run2 = "run-2";
      const goal = "goal-1";
      await ref.store.append(run1, [attemptStarted(newId(), "2025-01-01T00:00:00.000Z")], "no_stream");
      await ref.store.append(
        goal,
        [
          attemptStarted(newId(), "2025-01-02T00:00:00.000Z"),
          attemptStarted(newId(), "2025-01-02T12:00:00.000Z"),
        ],
        "no_stream",
      );
      await ref.store.append(run2, [attemptStarted(newId(), "2025-01-03T00:00:00.000Z")], "no_stream");
      await ref.store.append(
        run1,
        [
          attemptStarted(newId(), "2025-01-04T00:00:00.000Z"),
          attemptStarted(newId(), "2025-01-05T00:00:00.000Z"),
        ],
        0,
      );
      expect(await ref.store.listStreams()).toEqual([
        {
          stream: run1,
          lastRevision: 2,
          firstAt: "2025-01-01T00:00:00.000Z",
          lastAt: "2025-01-05T00:00:00.000Z",
        },
        {
          stream: run2,
          lastRevision: 0,
          firstAt: "2025-01-03T00:00:00.000Z",
          lastAt: "2025-01-03T00:00:00.000Z",
        },
        {
          stream: goal,
          lastRevision: 1,
          firstAt: "2025-01-02T00:00:00.000Z",
          lastAt: "2025-01-02T12:00:00.000Z",
        },
      ]);
      expect((await ref.store.listStreams({ prefix: "run-" })).map((s) => s.stream)).toEqual([run1, run2]);
      expect((await ref.store.listStreams({ limit: 2 })).map((s) => s.stream)).toEqual([run1, run2]);
      expect((await ref.store.listStreams({ prefix: "run-", limit: 1 })).map((s) => s.stream)).toEqual([
        run1,
      ]);
      expect(await ref.store.listStreams({ prefix: "nothing-" })).toEqual([]);
    });

    it("matches a stream prefix literally: case-sensitive, no wildcards", async () => {
      for (const stream of ["a_b/1", "axb/2", "A_B/3", "a%c/4", "abc/5"]) {
        await ref.store.append(stream, batch(1), "no_stream");
      }
      const names = async (prefix: string) => (await ref.store.listStreams({ prefix })).map((s) => s.stream);
      expect(await names("a_b")).toEqual(["a_b/1"]);
      expect(await names("a%")).toEqual(["a%c/4"]);
      expect(await names("A")).toEqual(["A_B/3"]);
      expect((await names("a")).sort()).toEqual(["a%c/4", "a_b/1", "abc/5", "axb/2"]);
    });

    it("returns events exactly as appended", async () => {
      const stream = newStream();
      const events = assortedEvents();
      await ref.store.append(stream, events.slice(0, 2), "no_stream");
      await ref.store.append(stream, events.slice(2), 1);
      const read = await ref.store.readStream(stream);
      expect(read.map(bare)).toEqual(events);
      expect(read.map((e) => e.stream)).toEqual(events.map(() => stream));
      expect((await ref.store.readAll()).map(bare)).toEqual(events);
    });
  });
}
