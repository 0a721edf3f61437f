// SQLite's own check of an events.db, as doctor runs it: a sound log has no problem, a damaged or
// unreadable one always has at least one (a file nobody could check is never called sound).
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteEventStore } from "../../../src/store/sqlite/sqlite-event-store.js";
import { sqliteIntegrityProblems } from "../../../src/store/sqlite/sqlite-integrity.js";
import { batch, newStream } from "../event-fixtures.js";

let dir = "";
let path = "";
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), "loopgate-integrity-"));
  path = join(dir, "events.db");
  const store = SqliteEventStore.open(path);
  // Enough events that the log spans several pages, so damage past the first page lands in table data.
  for (let i = 0; i < 20; i++) await store.append(newStream(), batch(10), "no_stream");
  await store.close();
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("sqliteIntegrityProblems", () => {
  it("a log written through the store: no problem, and the file is not changed", () => {
    const before = readFileSync(path);
    expect(readFileSync(path).length).toBeGreaterThan(4 * 4096);
    expect(sqliteIntegrityProblems(path)).toEqual([]);
    expect(readFileSync(path).equals(before)).toBe(true);
  });

  it("garbage over the header: one problem naming the file and SQLite's code", () => {
    const b = readFileSync(path);
    b.fill(0x5a, 0, 100);
    writeFileSync(path, b);
    const problems = sqliteIntegrityProblems(path);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toContain(path);
    expect(problems[0]).toContain("SQLITE_NOTADB");
  });

  it("garbage over the pages after the first: at least one problem", () => {
    const b = readFileSync(path);
    b.fill(0xa5, 4096);
    writeFileSync(path, b);
    expect(sqliteIntegrityProblems(path).length).toBeGreaterThan(0);
  });

  it("a truncated log and a missing one: a problem each, never a clean bill", () => {
    writeFileSync(path, readFileSync(path).subarray(0, 5000));
    expect(sqliteIntegrityProblems(path).length).toBeGreaterThan(0);
    expect(sqliteIntegrityProblems(join(dir, "absent.db")).length).toBe(1);
  });
});
