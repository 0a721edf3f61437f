import { describe, expect, it } from "vitest";
import type { LoopgateEvent } from "../../src/core/events/loopgate-event.js";
import { CorruptEventError, LoopgateError } from "../../src/core/kernel/errors.js";
import { attemptStarted, batch, newId, newStream, rejection } from "./event-fixtures.js";
import type { StoreRef } from "./event-store-contract.js";
import { twoWriterProperty } from "./event-store-contract-property.js";

/** Event ids make retries idempotent and are unique across the log; invalid events never land. */
export function idempotencyAndValidationContract(ref: StoreRef): void {
  describe("event ids and retries", () => {
    it("treats a resent batch as a retry: appended 0, nothing duplicated, even with the pre-append revision", async () => {
      const stream = newStream();
      const first = batch(2);
      await ref.store.append(stream, first, "no_stream");
      const second = batch(3);
      expect(await ref.store.append(stream, second, 1)).toEqual({ lastRevision: 4, appended: 3 });
      // The writer never saw the answer and resends with what it believed before.
      expect(await ref.store.append(stream, second, 1)).toEqual({ lastRevision: 4, appended: 0 });
      expect(await ref.store.append(stream, second, "any")).toEqual({ lastRevision: 4, appended: 0 });
      expect(await ref.store.append(stream, first, "no_stream")).toEqual({ lastRevision: 1, appended: 0 });
      const ids = (await ref.store.readAll()).map((e) => e.id);
      expect(ids).toEqual([...first, ...second].map((e) => e.id));
    });

    it("recognises a retry after the stream has moved on", async () => {
      const stream = newStream();
      const mine = batch(2);
      await ref.store.append(stream, mine, "no_stream");
      await ref.store.append(stream, batch(1), 1);
      expect(await ref.store.append(stream, mine, "no_stream")).toEqual({ lastRevision: 1, appended: 0 });
      expect(await ref.store.readStream(stream)).toHaveLength(3);
    });

    it("rejects a batch that only partly repeats an earlier one, writing none of it", async () => {
      const stream = newStream();
      const [a, b] = batch(2);
      if (!a || !b) throw new Error("fixture");
      await ref.store.append(stream, [a, b], "no_stream");
      const c = attemptStarted(newId());
      for (const overlapping of [
        [a, b, c],
        [b, c],
        [c, a],
        [b, a],
      ]) {
        const error = await rejection(ref.store.append(stream, overlapping, "any"));
        expect(error).toBeInstanceOf(LoopgateError);
        expect(error).toMatchObject({ code: "duplicate_event_id" });
      }
      expect((await ref.store.readAll()).map((e) => e.id)).toEqual([a.id, b.id]);
    });

    it("rejects an id that is stored in another stream", async () => {
      const [s1, s2] = [newStream(), newStream()];
      const event = attemptStarted(newId());
      await ref.store.append(s1, [event], "no_stream");
      const error = await rejection(ref.store.append(s2, [event], "no_stream"));
      expect(error).toMatchObject({ code: "duplicate_event_id" });
      expect(error.message).toContain(event.id);
      expect(error.message).toContain(s1);
      expect(await ref.store.readStream(s2)).toEqual([]);
      expect((await ref.store.listStreams()).map((s) => s.stream)).toEqual([s1]);
    });

    it("rejects a stored id resent with different content", async () => {
      const stream = newStream();
      const original = attemptStarted(newId(), "2025-01-01T00:00:00.000Z", 1);
      await ref.store.append(stream, [original], "no_stream");
      const altered = attemptStarted(original.id, "2025-01-01T00:00:00.000Z", 2);
      const error = await rejection(ref.store.append(stream, [altered], "no_stream"));
      expect(error).toMatchObject({ code: "duplicate_event_id" });
      const read = await ref.store.readStream(stream);
      expect(read.map((e) => e.data)).toEqual([{ attempt: 1, required_fix: null }]);
    });

    it("rejects a batch that repeats an id within itself", async () => {
      const stream = newStream();
      const event = attemptStarted(newId());
      const error = await rejection(ref.store.append(stream, [event, attemptStarted(newId()), event], "any"));
      expect(error).toMatchObject({ code: "duplicate_event_id" });
      expect(await ref.store.readStream(stream)).toEqual([]);
    });
  });

  describe("validation", () => {
    const invalid: Array<[string, (e: LoopgateEvent) => unknown, string]> = [
      [
        "a data field out of range",
        (e) => ({ ...e, data: { attempt: 0, required_fix: null } }),
        "data.attempt",
      ],
      ["a missing meta field", (e) => ({ ...e, meta: { origin: "runtime" } }), "meta.at"],
      [
        "a bad origin",
        (e) => ({ ...e, meta: { at: "2025-01-01T00:00:00Z", origin: "builder" } }),
        "meta.origin",
      ],
      ["an unknown type", (e) => ({ ...e, type: "attempt_exploded" }), "type"],
      ["an empty id", (e) => ({ ...e, id: "" }), "id"],
    ];
    for (const [what, spoil, field] of invalid) {
      it(`rejects ${what}, naming the event and ${field}, and writes nothing`, async () => {
        const stream = newStream();
        const before = batch(2);
        await ref.store.append(stream, before, "no_stream");
        const good = attemptStarted(newId());
        const bad = spoil(attemptStarted(newId())) as LoopgateEvent;
        const error = await rejection(ref.store.append(stream, [good, bad], 1));
        expect(error).toBeInstanceOf(CorruptEventError);
        expect(error.message).toContain("[1]");
        expect(error.message).toContain(`${field}:`);
        expect(error.message).toContain(stream);
        expect((await ref.store.readStream(stream)).map((e) => e.id)).toEqual(before.map((e) => e.id));
        expect(await ref.store.listStreams()).toMatchObject([{ stream, lastRevision: 1 }]);
        expect(await ref.store.append(stream, [good], 1)).toEqual({ lastRevision: 2, appended: 1 });
      });
    }
  });

  twoWriterProperty(ref);
}
