import type { ZodError } from "zod";
import type { EventSchema, RecordedEvent } from "../../core/events/loopgate-event.js";
import { CorruptEventError, formatPath } from "../../core/kernel/errors.js";
import { DuplicateEventIdError } from "./store-errors.js";

/** A validated event with its JSON columns serialized, ready to insert. */
export interface EncodedEvent {
  id: string;
  type: string;
  data: string;
  meta: string;
  /** `meta.at`, kept for the stream summary. */
  at: string;
}

/** One stored row as the SQL stores return it. */
export interface StoredRow {
  position: number;
  stream: string;
  revision: number;
  id: string;
  type: string;
  data: string;
  meta: string;
}

/** Formats the first few zod issues as `path: message`, so an error names every bad field it can. */
export function describeIssues(issues: ZodError["issues"]): string {
  const shown = issues.slice(0, 3).map((issue) => `${formatPath(issue.path)}: ${issue.message}`);
  const more = issues.length > 3 ? `; and ${issues.length - 3} more` : "";
  return shown.join("; ") + more;
}

/**
 * Validates and serializes a batch before anything touches the store.
 * Throws CorruptEventError naming the index, type, id and field path of the first bad event,
 * or DuplicateEventIdError when the batch repeats an id.
 */
export function encodeEvents(
  stream: string,
  events: readonly unknown[],
  schema: EventSchema,
): EncodedEvent[] {
  const seen = new Map<string, number>();
  return events.map((candidate, index) => {
    const parsed = schema.safeParse(candidate);
    if (!parsed.success) {
      const raw = (typeof candidate === "object" && candidate !== null ? candidate : {}) as Record<
        string,
        unknown
      >;
      throw new CorruptEventError(
        `append to stream ${stream}: event [${index}] (type ${String(raw.type)}, id ${String(raw.id)}) ` +
          `is invalid, nothing was written: ${describeIssues(parsed.error.issues)}`,
        { cause: parsed.error },
      );
    }
    const event = parsed.data;
    const earlier = seen.get(event.id);
    if (earlier !== undefined) {
      throw new DuplicateEventIdError(
        stream,
        event.id,
        `appears twice in one batch, at [${earlier}] and [${index}]`,
      );
    }
    seen.set(event.id, index);
    return {
      id: event.id,
      type: event.type,
      data: JSON.stringify(event.data),
      meta: JSON.stringify(event.meta),
      at: event.meta.at,
    };
  });
}

/** Parses and validates a stored row; a row that fails throws CorruptEventError naming stream, revision and field. */
export function decodeRow(row: StoredRow, schema: EventSchema): RecordedEvent {
  const where = `stream ${row.stream} revision ${row.revision} (position ${row.position}, event id ${row.id})`;
  const column = (name: "data" | "meta", text: string): unknown => {
    try {
      return JSON.parse(text);
    } catch (error) {
      throw new CorruptEventError(`stored event at ${where} is corrupt: column ${name} is not valid JSON`, {
        cause: error,
      });
    }
  };
  const candidate = {
    id: row.id,
    type: row.type,
    data: column("data", row.data),
    meta: column("meta", row.meta),
  };
  const parsed = schema.safeParse(candidate);
  if (!parsed.success) {
    throw new CorruptEventError(
      `stored event at ${where} fails its schema: ${describeIssues(parsed.error.issues)}`,
      { cause: parsed.error },
    );
  }
  return { ...parsed.data, stream: row.stream, revision: row.revision, position: row.position };
}
