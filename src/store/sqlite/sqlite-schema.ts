import type Database from "better-sqlite3";
import { InputError } from "../../core/kernel/errors.js";

/** The schema version this code writes, kept in `PRAGMA user_version`. */
export const SQLITE_SCHEMA_VERSION = 1;

// STRICT makes SQLite reject a wrongly typed column instead of silently storing it.
// `streams` is an index of `events` kept in the same transaction as every append, so that
// listing streams does not scan the log; `events` stays the only source of revisions.
const DDL = `
CREATE TABLE events (
  position INTEGER PRIMARY KEY AUTOINCREMENT,
  stream TEXT NOT NULL,
  revision INTEGER NOT NULL CHECK (revision >= 0),
  id TEXT NOT NULL UNIQUE,
  type TEXT NOT NULL,
  data TEXT NOT NULL,
  meta TEXT NOT NULL,
  recorded_at TEXT NOT NULL,
  UNIQUE (stream, revision)
) STRICT;
CREATE TABLE streams (
  stream TEXT PRIMARY KEY,
  last_revision INTEGER NOT NULL,
  last_position INTEGER NOT NULL,
  first_at TEXT NOT NULL,
  last_at TEXT NOT NULL
) STRICT;
CREATE INDEX streams_by_last_position ON streams (last_position);
`;

/** Sets the durability and locking pragmas; throws InputError when the file cannot run in WAL mode. */
export function applyPragmas(db: Database.Database, path: string, busyTimeoutMs: number): void {
  // busy_timeout first: switching to WAL needs a lock another process may hold.
  db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
  const mode = String(db.pragma("journal_mode = WAL", { simple: true }));
  if (mode !== "wal" && !(path === ":memory:" && mode === "memory")) {
    throw new InputError(
      `SQLite refused WAL journal mode (got ${mode}); use a local filesystem for the store`,
      path,
    );
  }
  db.pragma("synchronous = FULL");
  db.pragma("foreign_keys = ON");
}

/** Creates the schema in an empty database, accepts the current version, refuses anything else. */
export function migrate(db: Database.Database, path: string): void {
  const check = (): boolean => {
    const version = Number(db.pragma("user_version", { simple: true }));
    if (version === SQLITE_SCHEMA_VERSION) return true;
    if (version > SQLITE_SCHEMA_VERSION) {
      throw new InputError(
        `event store schema version ${version} is newer than this loopgate understands (${SQLITE_SCHEMA_VERSION}); upgrade loopgate`,
        path,
      );
    }
    if (version !== 0) throw new InputError(`unknown event store schema version ${version}`, path);
    const tables = db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").get() as {
      n: number;
    };
    if (tables.n > 0) {
      throw new InputError("this SQLite file already holds tables and is not a loopgate event store", path);
    }
    return false;
  };
  if (check()) return;
  // Two processes may open a fresh file at once: re-check under the write lock.
  db.transaction(() => {
    if (check()) return;
    db.exec(DDL);
    db.pragma(`user_version = ${SQLITE_SCHEMA_VERSION}`);
  }).immediate();
}

/** For a read-only open: the log must already carry this code's schema (nothing can be created). */
export function checkVersion(db: Database.Database, path: string): void {
  const version = Number(db.pragma("user_version", { simple: true }));
  if (version === SQLITE_SCHEMA_VERSION) return;
  if (version > SQLITE_SCHEMA_VERSION)
    throw new InputError(
      `event store schema version ${version} is newer than this loopgate understands (${SQLITE_SCHEMA_VERSION}); upgrade loopgate`,
      path,
    );
  throw new InputError(
    version === 0
      ? "the file holds no loopgate event log (no schema): it is empty or another SQLite database"
      : `unknown event store schema version ${version}`,
    path,
  );
}
