import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteEventStore } from "../../src/store/sqlite/sqlite-event-store.js";
import {
  BIN,
  type CliResult,
  exampleTask,
  loopgate,
  parseStdout,
  ROOT,
  removeTemps,
  show,
  tempDir,
} from "./cli.js";

// Every broken store gets one line on stderr naming the path, what is wrong and what to do, exit 2,
// and nothing already recorded is changed.
const task = exampleTask("js-slugify");
let source: string; // a store holding one finished run
let runId: string;

beforeAll(async () => {
  source = join(tempDir(), "store");
  const r = await loopgate([
    "run",
    task,
    "--builder",
    "true",
    "--max-attempts",
    "1",
    "--store",
    source,
    "--json",
  ]);
  expect(r.code, show(r)).toBe(1);
  runId = parseStdout<{ run_id: string }>(r).run_id;
}, 60_000);
afterAll(removeTemps);

/** A fresh copy of the source store. */
function copyStore(): string {
  const dir = join(tempDir(), "store");
  cpSync(source, dir, { recursive: true });
  return dir;
}
const digest = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex");

/** One line on stderr, no stack trace, exit 2, naming `path` and `words`. */
function expectOneLine(r: CliResult, path: string, words: RegExp): void {
  expect(r.code, show(r)).toBe(2);
  const lines = r.stderr.trim().split("\n");
  expect(lines, show(r)).toHaveLength(1);
  expect(r.stderr).not.toContain("internal error");
  expect(r.stderr).toContain(path);
  expect(r.stderr).toMatch(words);
}

/** Runs the CLI under bubblewrap with `store` bound read-only (as root, a mode bit would not stop it). */
function loopgateReadOnly(store: string, args: string[]): Promise<CliResult> {
  const argv = ["--bind", "/", "/", "--ro-bind", store, store, "--dev", "/dev", "--proc", "/proc"];
  return new Promise((res, rej) => {
    const env = { ...process.env };
    delete env.LOOPGATE_STORE;
    const child = spawn("bwrap", [...argv, process.execPath, BIN, ...args], { cwd: ROOT, env });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    child.on("error", rej);
    child.on("close", (code, signal) => res({ code, signal, stdout, stderr }));
  });
}

describe("a read-only store folder", () => {
  it("runs, status and events read it; a run that would write is refused in one line", async () => {
    const store = copyStore();
    const before = digest(join(store, "events.db"));
    const probe = await loopgateReadOnly(store, ["runs", "--store", store, "--json"]);
    expect(probe.code, show(probe)).toBe(0);
    expect(parseStdout<{ run_id: string }[]>(probe).map((r) => r.run_id)).toEqual([runId]);
    const status = await loopgateReadOnly(store, ["status", runId, "--store", store, "--json"]);
    expect(status.code, show(status)).toBe(1); // the run ESCALATED
    expect(parseStdout<{ status: string }>(status).status).toBe("ESCALATED");
    const events = await loopgateReadOnly(store, ["events", runId, "--store", store]);
    expect(events.code, show(events)).toBe(0);
    expect(events.stdout).toContain("run_started");
    const run = await loopgateReadOnly(store, ["run", task, "--builder", "true", "--store", store]);
    expectOneLine(run, store, /is read-only; .*writable/);
    expect(digest(join(store, "events.db"))).toBe(before);
  });
});

describe("a store path that is a file", () => {
  it("is refused for reading and for writing, and the file is left alone", async () => {
    const file = join(tempDir(), "not-a-folder");
    writeFileSync(file, "hello\n");
    expectOneLine(
      await loopgate(["runs", "--store", file]),
      file,
      /is a file, not a folder; pass --store a folder/,
    );
    expectOneLine(
      await loopgate(["run", task, "--builder", "true", "--store", file]),
      file,
      /is a file, not a folder/,
    );
    expect(readFileSync(file, "utf8")).toBe("hello\n");
  });
});

describe("a corrupted or truncated events.db", () => {
  const cases: [string, (db: string) => void][] = [
    [
      "a garbage header",
      (db) => writeFileSync(db, Buffer.concat([Buffer.alloc(100, 0x5a), readFileSync(db).subarray(100)])),
    ],
    [
      "garbage pages",
      (db) => {
        const b = readFileSync(db);
        b.fill(0xa5, 4096 * 2, Math.min(b.length, 4096 * 6));
        writeFileSync(db, b);
      },
    ],
    ["a truncated file", (db) => writeFileSync(db, readFileSync(db).subarray(0, 5000))],
  ];
  for (const [what, damage] of cases)
    it(`with ${what}: every command says so in one line and the file is not touched`, async () => {
      const store = copyStore();
      const db = join(store, "events.db");
      damage(db);
      const before = digest(db);
      for (const args of [["runs"], ["events", runId], ["run", task, "--builder", "true"]])
        expectOneLine(
          await loopgate([...args, "--store", store]),
          db,
          /corrupted .*restore events\.db from a backup/,
        );
      expect(digest(db)).toBe(before);
    });
});

describe("a log missing or empty beside run folders", () => {
  it("a 0-byte events.db is refused, naming the run folders, and no new log starts over it", async () => {
    const store = copyStore();
    const db = join(store, "events.db");
    writeFileSync(db, "");
    for (const args of [["runs"], ["status", runId], ["run", task, "--builder", "true"]]) {
      const r = await loopgate([...args, "--store", store]);
      expectOneLine(r, db, /is empty \(0 bytes\) but 1 run folder\(s\) exist/);
      expect(r.stderr).toContain(runId);
    }
    expect(statSync(db).size).toBe(0);
  });

  it("a missing events.db beside run folders is refused too; so is a log holding no runs beside them", async () => {
    const store = copyStore();
    const db = join(store, "events.db");
    rmSync(db);
    const r = await loopgate(["run", task, "--builder", "true", "--store", store]);
    expectOneLine(r, db, /is missing but 1 run folder\(s\) exist .*will not start a new log/);
    expect(existsSync(db)).toBe(false);
    // A fresh log with no runs (another store's) put in its place is refused the same way.
    const other = SqliteEventStore.open(join(tempDir(), "events.db"));
    await other.close();
    cpSync(other.path, db);
    const before = digest(db);
    expectOneLine(
      await loopgate(["runs", "--store", store]),
      db,
      /holds no runs but 1 run folder\(s\) exist/,
    );
    expectOneLine(await loopgate(["run", task, "--builder", "true", "--store", store]), db, /holds no runs/);
    expect(digest(db)).toBe(before);
  });
});
