import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ConcurrencyError, InputError } from "../../src/core/kernel/errors.js";
import type { EventStore } from "../../src/store/kernel/event-store.js";
import { attemptStarted, batch, newId, newStream, rejection } from "./event-fixtures.js";
import { idempotencyAndValidationContract } from "./event-store-contract-ids.js";
import { readsAndListingContract } from "./event-store-contract-reads.js";

/** Opens a fresh, empty store for one test, and removes it afterwards. */
export type OpenStore = () => Promise<{ store: EventStore; cleanup(): Promise<void> }>;

/** Holds the store of the running test; set by the suite's beforeEach. */
export interface StoreRef {
  store: EventStore;
}

/**
 * The behaviour every EventStore must have, written against the interface only.
 * `open` must return an empty store each time.
 */
export function eventStoreContract(name: string, open: OpenStore): void {
  describe(`EventStore contract: ${name}`, () => {
    const ref = {} as StoreRef;
    let cleanup: () => Promise<void> = async () => {};
    beforeEach(async () => {
      const opened = await open();
      ref.store = opened.store;
      cleanup = opened.cleanup;
    });
    afterEach(async () => {
      await ref.store.close();
      await cleanup();
    });

    expectedRevisionContract(ref);
    readsAndListingContract(ref);
    idempotencyAndValidationContract(ref);
  });
}

function expectedRevisionContract(ref: StoreRef): void {
  describe("expected revisions", () => {
    it("starts a new stream at revision 0 with no_stream", async () => {
      const stream = newStream();
      const events = batch(2);
      expect(await ref.store.append(stream, events, "no_stream")).toEqual({ lastRevision: 1, appended: 2 });
      const read = await ref.store.readStream(stream);
      expect(read.map((e) => [e.id, e.stream, e.revision])).toEqual([
        [events[0]?.id, stream, 0],
        [events[1]?.id, stream, 1],
      ]);
    });

    it("starts a new stream with any", async () => {
      const stream = newStream();
      expect(await ref.store.append(stream, batch(1), "any")).toEqual({ lastRevision: 0, appended: 1 });
      expect(await ref.store.append(stream, batch(1), "any")).toEqual({ lastRevision: 1, appended: 1 });
    });

    it("rejects expected revision 0 on a missing stream, with actual -1, and writes nothing", async () => {
      const stream = newStream();
      const error = await rejection(ref.store.append(stream, batch(1), 0));
      expect(error).toBeInstanceOf(ConcurrencyError);
      expect(error).toMatchObject({ code: "concurrency_conflict", stream, expected: "0", actual: -1 });
      expect(await ref.store.readStream(stream)).toEqual([]);
      expect(await ref.store.listStreams()).toEqual([]);
    });

    it("rejects stream_exists on a missing stream and accepts it once the stream exists", async () => {
      const stream = newStream();
      const error = await rejection(ref.store.append(stream, batch(1), "stream_exists"));
      expect(error).toBeInstanceOf(ConcurrencyError);
      expect(error).toMatchObject({ expected: "stream_exists", actual: -1 });
      await ref.store.append(stream, batch(2), "no_stream");
      expect(await ref.store.append(stream, batch(1), "stream_exists")).toEqual({
        lastRevision: 2,
        appended: 1,
      });
    });

    it("rejects no_stream on an existing stream, naming its last revision", async () => {
      const stream = newStream();
      await ref.store.append(stream, batch(3), "no_stream");
      const error = await rejection(ref.store.append(stream, batch(1), "no_stream"));
      expect(error).toBeInstanceOf(ConcurrencyError);
      expect(error).toMatchObject({ expected: "no_stream", actual: 2 });
      expect(await ref.store.readStream(stream)).toHaveLength(3);
    });

    it("appends on a matching revision and rejects a stale one with expected and actual", async () => {
      const stream = newStream();
      await ref.store.append(stream, batch(3), "no_stream");
      expect(await ref.store.append(stream, batch(1), 2)).toEqual({ lastRevision: 3, appended: 1 });
      const stale = batch(2);
      const error = await rejection(ref.store.append(stream, stale, 2));
      expect(error).toBeInstanceOf(ConcurrencyError);
      expect(error).toMatchObject({ stream, expected: "2", actual: 3 });
      expect(error.message).toContain(stream);
      const ids = (await ref.store.readStream(stream)).map((e) => e.id);
      expect(ids).toHaveLength(4);
      expect(ids).not.toContain(stale[0]?.id);
      const ahead = await rejection(ref.store.append(stream, batch(1), 9));
      expect(ahead).toMatchObject({ expected: "9", actual: 3 });
    });

    it("numbers revisions contiguously from 0 across appends of different sizes", async () => {
      const stream = newStream();
      const sizes = [1, 3, 2, 1, 4];
      let expected = -1;
      const ids: string[] = [];
      for (const size of sizes) {
        const events = batch(size);
        ids.push(...events.map((e) => e.id));
        const result = await ref.store.append(stream, events, expected === -1 ? "no_stream" : expected);
        expect(result).toEqual({ lastRevision: expected + size, appended: size });
        expected += size;
      }
      const read = await ref.store.readStream(stream);
      expect(read.map((e) => e.revision)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(read.map((e) => e.id)).toEqual(ids);
    });

    it("answers an empty batch with the current state, still checking the expected revision", async () => {
      const stream = newStream();
      expect(await ref.store.append(stream, [], "no_stream")).toEqual({ lastRevision: -1, appended: 0 });
      expect(await ref.store.listStreams()).toEqual([]);
      expect(await rejection(ref.store.append(stream, [], 0))).toMatchObject({ expected: "0", actual: -1 });
      await ref.store.append(stream, batch(2), "no_stream");
      expect(await ref.store.append(stream, [], 1)).toEqual({ lastRevision: 1, appended: 0 });
      expect(await rejection(ref.store.append(stream, [], 0))).toMatchObject({ expected: "0", actual: 1 });
      expect(await ref.store.readStream(stream)).toHaveLength(2);
    });

    it("refuses a malformed expected revision or stream name as bad input", async () => {
      const stream = newStream();
      for (const bad of [-1, 1.5, "latest"]) {
        const error = await rejection(ref.store.append(stream, batch(1), bad as never));
        expect(error).toBeInstanceOf(InputError);
      }
      expect(await rejection(ref.store.append("", [attemptStarted(newId())], "any"))).toBeInstanceOf(
        InputError,
      );
      expect(await ref.store.readAll()).toEqual([]);
    });
  });
}
