import { accessSync, constants, copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import Database from "better-sqlite3";
import { storeErrorFromSqlite } from "../kernel/store-errors.js";

/** How many of SQLite's problem lines are kept (a wrecked file can report thousands). */
const MAX_PROBLEMS = 20;

/**
 * SQLite's own check of an events.db (`PRAGMA quick_check`: every page, record and free list), read
 * without writing anything. Returns [] when SQLite finds nothing wrong, else the problems it names; a
 * file it cannot read at all (not a database, truncated) is one problem with SQLite's code. A check
 * that cannot run is a problem too: a file nobody could check is never reported sound.
 */
export function sqliteIntegrityProblems(path: string): string[] {
  let copy: string | undefined;
  try {
    try {
      return quickCheck(path);
    } catch (error) {
      // A WAL log in a folder this user cannot write cannot be opened read-only (SQLite needs the -shm
      // file beside it): check a private copy instead, as read-only commands read one.
      if (!isCantOpen(error) || writable(dirname(path))) throw error;
      copy = mkdtempSync(join(tmpdir(), "loopgate-check-"));
      copyFileSync(path, join(copy, "events.db"));
      if (existsSync(`${path}-wal`)) copyFileSync(`${path}-wal`, join(copy, "events.db-wal"));
      return quickCheck(join(copy, "events.db"));
    }
  } catch (error) {
    const known = storeErrorFromSqlite(path, error);
    return [known ? known.message : `the check could not run: ${(error as Error).message}`];
  } finally {
    if (copy) rmSync(copy, { recursive: true, force: true });
  }
}

function quickCheck(file: string): string[] {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const rows = db.pragma(`quick_check(${MAX_PROBLEMS})`) as Record<string, unknown>[];
    const lines = rows.map((r) => String(Object.values(r)[0]));
    return lines.length === 1 && lines[0] === "ok" ? [] : lines.length ? lines : ["quick_check said nothing"];
  } finally {
    db.close();
  }
}

function isCantOpen(error: unknown): boolean {
  return error instanceof Error && "code" in error && String(error.code).startsWith("SQLITE_CANTOPEN");
}

function writable(dir: string): boolean {
  try {
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}
