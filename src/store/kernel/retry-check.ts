import type { EncodedEvent, StoredRow } from "./event-codec.js";
import type { AppendResult } from "./event-store.js";
import { DuplicateEventIdError } from "./store-errors.js";

/**
 * The idempotent-retry rule every store shares. A batch whose first id is stored is a retry only if every
 * id sits, unchanged and in order, in this stream: then the answer is the original append's result and
 * nothing is written. Returns undefined when the first id is not stored (not a retry); throws
 * DuplicateEventIdError for any other reuse. `lookup` returns the stored row of an id, if any.
 */
export function asRetry(
  stream: string,
  events: readonly EncodedEvent[],
  lookup: (id: string) => StoredRow | undefined,
): AppendResult | undefined {
  const head = events[0];
  const first = head && lookup(head.id);
  if (!first) return undefined;
  for (const [index, event] of events.entries()) {
    const row = index === 0 ? first : lookup(event.id);
    const at = `revision ${first.revision + index}`;
    if (!row) {
      throw new DuplicateEventIdError(
        stream,
        first.id,
        `is already stored, but event [${index}] (${event.id}) of this batch is not: the batch only partly repeats an earlier append`,
      );
    }
    if (row.stream !== stream) {
      throw new DuplicateEventIdError(
        stream,
        row.id,
        `is already stored in stream ${row.stream} at revision ${row.revision}`,
      );
    }
    if (row.revision !== first.revision + index) {
      throw new DuplicateEventIdError(
        stream,
        row.id,
        `is stored at revision ${row.revision}, not at ${at} as a retry would need`,
      );
    }
    if (row.type !== event.type || row.data !== event.data || row.meta !== event.meta) {
      throw new DuplicateEventIdError(
        stream,
        row.id,
        `is stored at revision ${row.revision} with different content`,
      );
    }
  }
  return { lastRevision: first.revision + events.length - 1, appended: 0 };
}
