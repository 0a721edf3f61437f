import { InputError, LoopgateError } from "../../core/kernel/errors.js";

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

/**
 * The store cannot be used as it is: a read-only or missing folder, a file where the folder should be, a
 * corrupted or truncated log, a log missing beside recorded runs. One line: the path, what is wrong, what
 * to do. Nothing was written.
 */
export class StoreError extends InputError {
  readonly path: string;
  constructor(path: string, problem: string, remedy: string, options?: { cause?: unknown }) {
    super(`${problem}; ${remedy}`, `store ${path}`, options);
    this.path = path;
  }
}

/** SQLite's error codes, as one StoreError each (or undefined when the error is not about the file). */
export function storeErrorFromSqlite(path: string, error: unknown): StoreError | undefined {
  const code = error instanceof Error && "code" in error ? String(error.code) : "";
  const nothing = "nothing was changed";
  if (code === "SQLITE_NOTADB" || code.startsWith("SQLITE_CORRUPT"))
    return new StoreError(
      path,
      `the event log is corrupted (${code}: ${(error as Error).message})`,
      `${nothing}; restore events.db from a backup, or move it aside to start a new store (its runs are then not readable)`,
      { cause: error },
    );
  if (code.startsWith("SQLITE_READONLY") || code.startsWith("SQLITE_CANTOPEN") || code === "SQLITE_PERM")
    return new StoreError(
      path,
      `the event log cannot be opened for writing (${code}: ${(error as Error).message})`,
      `${nothing}; make the store folder and events.db writable, or pass --store a writable folder`,
      { cause: error },
    );
  if (code === "SQLITE_FULL")
    return new StoreError(
      path,
      "the disk is full",
      "free space and run the command again (appends are idempotent)",
      {
        cause: error,
      },
    );
  if (code.startsWith("SQLITE_IOERR"))
    return new StoreError(
      path,
      `reading or writing the event log failed (${code}: ${(error as Error).message})`,
      "check the disk and the filesystem, then run the command again",
      { cause: error },
    );
  return undefined;
}
