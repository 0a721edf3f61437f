import fc from "fast-check";
import { expect, it } from "vitest";
import type { LoopgateEvent } from "../../src/core/events/loopgate-event.js";
import { ConcurrencyError } from "../../src/core/kernel/errors.js";
import { batch, newStream, rejection } from "./event-fixtures.js";
import type { StoreRef } from "./event-store-contract.js";

type Step =
  | { kind: "append"; writer: 0 | 1; size: number }
  | { kind: "refresh"; writer: 0 | 1 }
  | { kind: "resend"; writer: 0 | 1 };

const writer = fc.constantFrom<0 | 1>(0, 1);
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({ kind: fc.constant("append"), writer, size: fc.integer({ min: 0, max: 3 }) }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("refresh"), writer }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("resend"), writer }) },
);

/**
 * Two logical writers, each acting on its own (possibly stale) view of the stream, interleaved at
 * random. A model that knows the true last revision predicts every outcome, so the store is
 * checked against rules, not against itself; afterwards the stream must hold exactly the
 * accepted batches, in order, with revisions 0..n-1.
 */
export function twoWriterProperty(ref: StoreRef): void {
  it("never leaves gaps or duplicates under random interleavings of two writers", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 25 }), async (steps) => {
        const stream = newStream("prop");
        let truth = -1;
        const known: [number, number] = [-1, -1];
        const sent: [SentBatch | undefined, SentBatch | undefined] = [undefined, undefined];
        const accepted: string[] = [];
        for (const s of steps) {
          if (s.kind === "refresh") {
            const events = await ref.store.readStream(stream);
            expect(events.length - 1).toBe(truth);
            known[s.writer] = truth;
          } else if (s.kind === "resend") {
            const last = sent[s.writer];
            if (!last) continue;
            expect(await ref.store.append(stream, last.events, last.expected)).toEqual({
              lastRevision: last.lastRevision,
              appended: 0,
            });
          } else {
            const events = batch(s.size, `w${s.writer}`);
            const expected = known[s.writer] === -1 ? "no_stream" : known[s.writer];
            if (known[s.writer] === truth) {
              const result = await ref.store.append(stream, events, expected);
              expect(result).toEqual({ lastRevision: truth + s.size, appended: s.size });
              truth += s.size;
              known[s.writer] = truth;
              accepted.push(...events.map((e) => e.id));
              if (s.size > 0) sent[s.writer] = { events, expected, lastRevision: truth };
            } else {
              const error = await rejection(ref.store.append(stream, events, expected));
              expect(error).toBeInstanceOf(ConcurrencyError);
              expect(error).toMatchObject({ expected: String(expected), actual: truth });
              known[s.writer] = truth; // the writer learns the actual revision from the error
            }
          }
        }
        const stored = await ref.store.readStream(stream);
        expect(stored.map((e) => e.id)).toEqual(accepted);
        expect(stored.map((e) => e.revision)).toEqual(accepted.map((_, i) => i));
      }),
      { numRuns: 60 },
    );
  });
}

interface SentBatch {
  events: LoopgateEvent[];
  expected: number | "no_stream";
  lastRevision: number;
}
