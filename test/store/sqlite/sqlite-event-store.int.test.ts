import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { LoopgateEvent } from "../../../src/core/events/loopgate-event.js";
import { CorruptEventError, InputError } from "../../../src/core/kernel/errors.js";
import { StoreBusyError } from "../../../src/store/kernel/store-errors.js";
import { SqliteEventStore } from "../../../src/store/sqlite/sqlite-event-store.js";
import { assortedEvents, bare, batch, newStream, rejection } from "../event-fixtures.js";
import { eventStoreContract } from "../event-store-contract.js";

eventStoreContract("SqliteEventStore", async () => {
  const dir = mkdtempSync(join(tmpdir(), "loopgate-store-"));
  const store = SqliteEventStore.open(join(dir, "nested", "events.db"));
  return { store, cleanup: async () => rmSync(dir, { recursive: true, force: true }) };
});

describe("SqliteEventStore on disk", () => {
  let dir = "";
  let path = "";
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "loopgate-sqlite-"));
    path = join(dir, "a", "b", "events.db");
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("runs in WAL mode with synchronous=FULL, a busy timeout and foreign keys", async () => {
    const store = SqliteEventStore.open(path, { busyTimeoutMs: 1234 });
    expect(store.settings()).toEqual({
      journalMode: "wal",
      synchronous: 2, // FULL
      busyTimeoutMs: 1234,
      foreignKeys: true,
      schemaVersion: 1,
    });
    await store.close();
    // WAL and the schema version live in the file, so a fresh connection sees them too.
    const raw = new Database(path, { readonly: true });
    expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(raw.pragma("user_version", { simple: true })).toBe(1);
    raw.close();
  });

  it("keeps events across close and reopen", async () => {
    const stream = newStream();
    const events = assortedEvents();
    const first = SqliteEventStore.open(path);
    await first.append(stream, events, "no_stream");
    await first.close();
    const second = SqliteEventStore.open(path);
    expect((await second.readStream(stream)).map(bare)).toEqual(events);
    expect(await second.append(stream, batch(1), events.length - 1)).toMatchObject({ appended: 1 });
    await second.close();
  });

  describe("a row corrupted on disk", () => {
    const corruptions: Array<[string, string, string, string]> = [
      ["data that is not JSON", "data", "{not json", "column data is not valid JSON"],
      ["meta that is not JSON", "meta", "", "column meta is not valid JSON"],
      ["data of the wrong shape", "data", '{"attempt":"one","required_fix":null}', "data.attempt:"],
      ["meta of the wrong shape", "meta", '{"at":"yesterday","origin":"runtime"}', "meta.at:"],
      ["an unknown type", "type", "attempt_exploded", "type:"],
    ];
    for (const [what, column, value, complaint] of corruptions) {
      it(`fails the read on ${what}, naming stream and revision`, async () => {
        const stream = newStream();
        const store = SqliteEventStore.open(path);
        await store.append(stream, batch(3), "no_stream");
        const raw = new Database(path);
        const changed = raw
          .prepare(`UPDATE events SET ${column} = ? WHERE stream = ? AND revision = 1`)
          .run(value, stream);
        raw.close();
        expect(changed.changes).toBe(1);
        for (const read of [
          store.readStream(stream),
          store.readAll(),
          store.readStream(stream, { fromRevision: 1 }),
        ]) {
          const error = await rejection(read);
          expect(error).toBeInstanceOf(CorruptEventError);
          expect(error.message).toContain(`stream ${stream} revision 1 `);
          expect(error.message).toContain(complaint);
        }
        // Rows before the bad one still read; the bad one is never skipped silently.
        expect(await store.readStream(stream, { limit: 1 })).toHaveLength(1);
        await store.close();
      });
    }
  });

  it("reports a lock held past the busy timeout as StoreBusyError, with nothing written", async () => {
    const stream = newStream();
    const store = SqliteEventStore.open(path, { busyTimeoutMs: 50 });
    const raw = new Database(path);
    raw.exec("BEGIN IMMEDIATE");
    const events = batch(2);
    const started = Date.now();
    const error = await rejection(store.append(stream, events, "no_stream"));
    expect(Date.now() - started).toBeGreaterThanOrEqual(40);
    expect(error).toBeInstanceOf(StoreBusyError);
    expect(error).toMatchObject({ code: "store_busy" });
    expect(error.message).toContain(path);
    raw.exec("ROLLBACK");
    raw.close();
    expect(await store.readStream(stream)).toEqual([]);
    expect(await store.append(stream, events, "no_stream")).toEqual({ lastRevision: 1, appended: 2 });
    await store.close();
  });

  it("validates with a custom schema on write and on read", async () => {
    const stream = newStream();
    const loose = SqliteEventStore.open(path);
    await loose.append(stream, batch(1), "no_stream");
    await loose.close();
    // Any zod schema serves; this one is LoopgateEvent's own rule plus one more.
    const onlyFirstAttempts = z.unknown().transform((input, ctx) => {
      const parsed = LoopgateEvent.safeParse(input);
      if (!parsed.success) {
        for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, code: "custom" });
        return z.NEVER;
      }
      const e = parsed.data;
      if (e.type === "attempt_started" && e.data.attempt !== 1)
        ctx.addIssue({ code: "custom", message: "only first attempts here", path: ["data", "attempt"] });
      return e;
    });
    const strict = SqliteEventStore.open(path, { schema: onlyFirstAttempts });
    expect(await strict.readStream(stream)).toHaveLength(1);
    const second = { ...batch(1)[0], data: { attempt: 2, required_fix: null } } as LoopgateEvent;
    const error = await rejection(strict.append(stream, [second], 0));
    expect(error).toBeInstanceOf(CorruptEventError);
    expect(error.message).toContain("data.attempt: only first attempts here");
    await strict.close();
  });

  it("refuses files that are not loopgate stores, naming the file", () => {
    const notDb = join(dir, "notes.db");
    writeFileSync(notDb, "this is not a database, just text that is long enough to have a header".repeat(20));
    expect(() => SqliteEventStore.open(notDb)).toThrow(InputError);
    expect(() => SqliteEventStore.open(notDb)).toThrow(notDb);

    const foreign = join(dir, "foreign.db");
    const raw = new Database(foreign);
    raw.exec("CREATE TABLE events (x TEXT)");
    raw.close();
    expect(() => SqliteEventStore.open(foreign)).toThrow(/not a loopgate event store/);

    const newer = join(dir, "newer.db");
    SqliteEventStore.open(newer).close();
    const bump = new Database(newer);
    bump.pragma("user_version = 99");
    bump.close();
    expect(() => SqliteEventStore.open(newer)).toThrow(/schema version 99 is newer/);
  });
});
