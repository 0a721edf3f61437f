import { LoopgateError } from "../core/errors.js";

/**
 * An event id that is already stored somewhere other than as an exact retry of this batch
 * (another stream, another position, other content, or only part of the batch).
 */
export class DuplicateEventIdError extends LoopgateError {
  readonly stream: string;
  readonly eventId: string;
  constructor(stream: string, eventId: string, detail: string, options?: { cause?: unknown }) {
    super(
      "duplicate_event_id",
      `append to stream ${stream}: event id ${eventId} ${detail}; an event id may be appended once, ` +
        "and a retry must resend the same batch unchanged",
      options,
    );
    this.stream = stream;
    this.eventId = eventId;
  }
}

/** The store stayed locked by another writer past the busy timeout; nothing was written, the append may be retried. */
export class StoreBusyError extends LoopgateError {
  readonly path: string;
  constructor(path: string, waitedMs: number, options?: { cause?: unknown }) {
    super(
      "store_busy",
      `event store ${path} stayed locked by another writer for more than ${waitedMs} ms; nothing was written. ` +
        "Retry the append (it is idempotent by event id) or find the process holding the lock",
      options,
    );
    this.path = path;
  }
}
