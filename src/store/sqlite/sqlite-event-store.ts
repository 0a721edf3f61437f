import { accessSync, constants, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";

import { type EventSchema, LoopgateEvent, type RecordedEvent } from "../../core/events/loopgate-event.js";
import { ConcurrencyError } from "../../core/kernel/errors.js";
import { decodeRow, type EncodedEvent, encodeEvents, type StoredRow } from "../kernel/event-codec.js";
import type {
  AppendResult,
  EventStore,
  ExpectedRevision,
  ListStreamsOptions,
  ReadAllOptions,
  ReadStreamOptions,
  StreamInfo,
} from "../kernel/event-store.js";
import { checkCount, checkExpected, checkStream, matchesExpected } from "../kernel/expected-revision.js";
import { asRetry } from "../kernel/retry-check.js";
import {
  DuplicateEventIdError,
  StoreBusyError,
  StoreError,
  storeErrorFromSqlite,
} from "../kernel/store-errors.js";
import { applyPragmas, checkVersion, migrate } from "./sqlite-schema.js";

/** Options for `SqliteEventStore.open`. */
export interface SqliteEventStoreOptions {
  /** Schema every event is validated against on write and on read (default: `LoopgateEvent`). */
  schema?: EventSchema;
  /** Open an existing log without writing to it (no schema creation, no journal-mode change). */
  readonly?: boolean;
  /** How long a writer waits for another process's write lock before `StoreBusyError` (default 5000). */
  busyTimeoutMs?: number;
}

/** What `SqliteEventStore.settings()` reports; `synchronous` 2 is FULL. */
export interface SqliteStoreSettings {
  journalMode: string;
  synchronous: number;
  busyTimeoutMs: number;
  foreignKeys: boolean;
  schemaVersion: number;
}

const NO_LIMIT = -1; // SQLite reads a negative LIMIT as "no limit"

/**
 * The embedded event store: one SQLite file in WAL mode with `synchronous=FULL`.
 *
 * better-sqlite3 is synchronous, so every method does its work before its promise settles and
 * calls on one connection never interleave. Between processes, an append takes the write lock
 * with `BEGIN IMMEDIATE`, so its revision check and inserts are atomic. A writer that finds the
 * lock held waits up to `busyTimeoutMs` (blocking its event loop, as better-sqlite3 does), then
 * gets `StoreBusyError` with nothing written; the append can be retried safely, being idempotent
 * by event id.
 */
export class SqliteEventStore implements EventStore {
  /** The file this store was opened on. */
  readonly path: string;
  private readonly db: Database.Database;
  private readonly schema: EventSchema;
  private readonly busyTimeoutMs: number;
  private readonly stmt;
  private readonly appendTx;
  /** The private copy a read-only store was read from, removed on close. */
  private cleanup: string | undefined;

  private constructor(db: Database.Database, path: string, schema: EventSchema, busyTimeoutMs: number) {
    this.db = db;
    this.path = path;
    this.schema = schema;
    this.busyTimeoutMs = busyTimeoutMs;
    const columns = "position, stream, revision, id, type, data, meta";
    this.stmt = {
      lastRevision: db.prepare("SELECT max(revision) AS r FROM events WHERE stream = ?").pluck(),
      byId: db.prepare(`SELECT ${columns} FROM events WHERE id = ?`),
      insert: db.prepare(
        "INSERT INTO events (stream, revision, id, type, data, meta, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      ),
      upsertStream: db.prepare(
        `INSERT INTO streams (stream, last_revision, last_position, first_at, last_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (stream) DO UPDATE SET last_revision = excluded.last_revision,
           last_position = excluded.last_position, last_at = excluded.last_at`,
      ),
      readStream: db.prepare(
        `SELECT ${columns} FROM events WHERE stream = ? AND revision >= ? ORDER BY revision LIMIT ?`,
      ),
      readAll: db.prepare(`SELECT ${columns} FROM events WHERE position >= ? ORDER BY position LIMIT ?`),
      // substr, not LIKE: LIKE ignores ASCII case and treats % and _ in a prefix as wildcards.
      listStreams: db.prepare(
        `SELECT stream, last_revision AS lastRevision, first_at AS firstAt, last_at AS lastAt FROM streams
         WHERE substr(stream, 1, length(@prefix)) = @prefix ORDER BY last_position DESC LIMIT @limit`,
      ),
    };
    this.appendTx = db.transaction(
      (stream: string, events: EncodedEvent[], expected: ExpectedRevision): AppendResult =>
        this.appendLocked(stream, events, expected),
    );
  }

  /**
   * Opens (creating if absent, with its parent folder) the store at `path`; with `readonly`, opens an
   * existing log without writing anything. SQLite cannot open a WAL log read-only in a folder it cannot
   * write (it needs the -shm file beside it): then a private copy of the log is read instead.
   */
  static open(path: string, options: SqliteEventStoreOptions = {}): SqliteEventStore {
    const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    const schema = options.schema ?? LoopgateEvent;
    if (options.readonly) return SqliteEventStore.openReadonly(path, schema, busyTimeoutMs);
    if (path !== ":memory:")
      try {
        mkdirSync(dirname(path), { recursive: true });
      } catch (e) {
        throw new StoreError(
          dirname(path),
          `cannot be created (${(e as NodeJS.ErrnoException).code})`,
          "pass --store a folder you can write, or create it first",
          { cause: e },
        );
      }
    let db: Database.Database | undefined;
    try {
      db = new Database(path);
      applyPragmas(db, path, busyTimeoutMs);
      migrate(db, path);
    } catch (error) {
      db?.close();
      throw storeErrorFromSqlite(path, error) ?? error;
    }
    return new SqliteEventStore(db, path, schema, busyTimeoutMs);
  }

  private static openReadonly(path: string, schema: EventSchema, busyTimeoutMs: number) {
    const attempt = (file: string): Database.Database => {
      const db = new Database(file, { readonly: true, fileMustExist: true });
      try {
        db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
        checkVersion(db, path);
        return db;
      } catch (error) {
        db.close();
        throw error;
      }
    };
    let snapshot: string | undefined;
    try {
      try {
        return new SqliteEventStore(attempt(path), path, schema, busyTimeoutMs);
      } catch (error) {
        if (!isCantOpen(error) || folderWritable(dirname(path))) throw error;
        snapshot = mkdtempSync(join(tmpdir(), "loopgate-ro-"));
        copyFileSync(path, join(snapshot, "events.db"));
        if (existsSync(`${path}-wal`)) copyFileSync(`${path}-wal`, join(snapshot, "events.db-wal"));
        const store = new SqliteEventStore(attempt(join(snapshot, "events.db")), path, schema, busyTimeoutMs);
        store.cleanup = snapshot;
        return store;
      }
    } catch (error) {
      if (snapshot) rmSync(snapshot, { recursive: true, force: true });
      throw storeErrorFromSqlite(path, error) ?? error;
    }
  }

  async append(
    stream: string,
    events: readonly LoopgateEvent[],
    expected: ExpectedRevision,
  ): Promise<AppendResult> {
    checkStream(stream);
    checkExpected(expected);
    const encoded = encodeEvents(stream, events, this.schema);
    return this.unlessBusy(() => this.appendTx.immediate(stream, encoded, expected));
  }

  async readStream(stream: string, options: ReadStreamOptions = {}): Promise<RecordedEvent[]> {
    checkStream(stream);
    const from = checkCount(options.fromRevision, "fromRevision") ?? 0;
    const limit = checkCount(options.limit, "limit") ?? NO_LIMIT;
    const rows = this.unlessBusy(() => this.stmt.readStream.all(stream, from, limit) as StoredRow[]);
    return rows.map((row) => decodeRow(row, this.schema));
  }

  async readAll(options: ReadAllOptions = {}): Promise<RecordedEvent[]> {
    const from = checkCount(options.fromPosition, "fromPosition") ?? 0;
    const limit = checkCount(options.limit, "limit") ?? NO_LIMIT;
    const rows = this.unlessBusy(() => this.stmt.readAll.all(from, limit) as StoredRow[]);
    return rows.map((row) => decodeRow(row, this.schema));
  }

  async listStreams(options: ListStreamsOptions = {}): Promise<StreamInfo[]> {
    const limit = checkCount(options.limit, "limit") ?? NO_LIMIT;
    return this.unlessBusy(
      () => this.stmt.listStreams.all({ prefix: options.prefix ?? "", limit }) as StreamInfo[],
    );
  }

  /** The settings this connection really runs with, read back from SQLite (for diagnostics and tests). */
  settings(): SqliteStoreSettings {
    const pragma = (name: string) => this.db.pragma(name, { simple: true });
    return {
      journalMode: String(pragma("journal_mode")),
      synchronous: Number(pragma("synchronous")),
      busyTimeoutMs: Number(pragma("busy_timeout")),
      foreignKeys: Number(pragma("foreign_keys")) === 1,
      schemaVersion: Number(pragma("user_version")),
    };
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
    if (this.cleanup) rmSync(this.cleanup, { recursive: true, force: true });
  }

  /** Runs inside BEGIN IMMEDIATE: nobody else can write between the revision check and the inserts. */
  private appendLocked(stream: string, events: EncodedEvent[], expected: ExpectedRevision): AppendResult {
    // A retry is recognised before the revision check: its expected revision is the pre-append one.
    const retry = asRetry(stream, events, (id) => this.stmt.byId.get(id) as StoredRow | undefined);
    if (retry) return retry;
    const actual = (this.stmt.lastRevision.get(stream) as number | null) ?? -1;
    if (!matchesExpected(expected, actual)) throw new ConcurrencyError(stream, String(expected), actual);
    const last = events.at(-1);
    if (!last) return { lastRevision: actual, appended: 0 };
    const recordedAt = new Date().toISOString();
    let position = 0;
    for (const [index, event] of events.entries()) {
      try {
        const info = this.stmt.insert.run(
          stream,
          actual + 1 + index,
          event.id,
          event.type,
          event.data,
          event.meta,
          recordedAt,
        );
        position = Number(info.lastInsertRowid);
      } catch (error) {
        if (isUniqueIdViolation(error)) this.throwDuplicate(stream, event, error);
        throw error;
      }
    }
    const lastRevision = actual + events.length;
    this.stmt.upsertStream.run(stream, lastRevision, position, events[0]?.at ?? last.at, last.at);
    return { lastRevision, appended: events.length };
  }

  private throwDuplicate(stream: string, event: EncodedEvent, cause: unknown): never {
    const row = this.stmt.byId.get(event.id) as StoredRow | undefined;
    const where = row ? `in stream ${row.stream} at revision ${row.revision}` : "";
    throw new DuplicateEventIdError(stream, event.id, `is already stored ${where}`.trim(), { cause });
  }

  private unlessBusy<T>(work: () => T): T {
    try {
      return work();
    } catch (error) {
      if (error instanceof Error && "code" in error && String(error.code).startsWith("SQLITE_BUSY")) {
        throw new StoreBusyError(this.path, this.busyTimeoutMs, { cause: error });
      }
      throw storeErrorFromSqlite(this.path, error) ?? error;
    }
  }
}

function isUniqueIdViolation(error: unknown): boolean {
  return (
    error instanceof Error &&
    "code" in error &&
    error.code === "SQLITE_CONSTRAINT_UNIQUE" &&
    error.message.includes("events.id")
  );
}

function isCantOpen(error: unknown): boolean {
  return error instanceof Error && "code" in error && String(error.code).startsWith("SQLITE_CANTOPEN");
}

function folderWritable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}
