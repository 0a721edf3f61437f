import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { SqliteEventStore } from "../../../src/store/sqlite/sqlite-event-store.js";

const root = fileURLToPath(new URL("../..", import.meta.url));
const fixture = fileURLToPath(new URL("../fixtures/appender.ts", import.meta.url));

interface Counts {
  writer: string;
  appended: number;
  batches: number;
  conflicts: number;
  attempts: number;
}

/** Starts one appender process; `ready` settles once its store is open, `done` with its counts. */
function appender(args: string[]): { ready: Promise<void>; done: Promise<Counts> } {
  const child = spawn(process.execPath, ["--import", "tsx", fixture, ...args], { cwd: root });
  let out = "";
  let err = "";
  let signalReady = (): void => {};
  const ready = new Promise<void>((resolve) => {
    signalReady = resolve;
  });
  child.stdout.on("data", (chunk: Buffer) => {
    out += chunk.toString();
    if (out.startsWith("ready\n")) signalReady();
  });
  child.stderr.on("data", (chunk: Buffer) => {
    err += chunk.toString();
  });
  const done = new Promise<Counts>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      signalReady(); // never leave the barrier waiting on a child that died early
      const last = out.trim().split("\n").at(-1) ?? "";
      if (code !== 0) reject(new Error(`appender ${args.join(" ")} exited ${code}:\n${err}${out}`));
      else resolve(JSON.parse(last) as Counts);
    });
  });
  return { ready, done };
}

/** Runs appenders that all start appending at the same moment. */
async function together(dir: string, runs: string[][]): Promise<Counts[]> {
  const barrier = join(dir, "go");
  const children = runs.map((args) => appender([...args, barrier]));
  await Promise.all(children.map((c) => c.ready));
  writeFileSync(barrier, "");
  return Promise.all(children.map((c) => c.done));
}

describe("SqliteEventStore shared by two OS processes", () => {
  let dir = "";
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "loopgate-procs-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("serialises writers on one stream by expected revision: no gaps, no duplicates, real conflicts", async () => {
    const path = join(dir, "events.db");
    await SqliteEventStore.open(path).close();
    const n = 60;
    const counts = await together(dir, [
      [path, "shared", "w1", String(n), "expected"],
      [path, "shared", "w2", String(n), "expected"],
    ]);
    expect(counts.map((c) => c.appended)).toEqual([n, n]);

    const store = SqliteEventStore.open(path);
    const events = await store.readStream("shared");
    await store.close();
    expect(events.map((e) => e.revision)).toEqual(Array.from({ length: 2 * n }, (_, i) => i));
    const expectedIds = ["w1", "w2"].flatMap((w) => Array.from({ length: n }, (_, i) => `${w}-${i}`));
    expect(events.map((e) => e.id).sort()).toEqual(expectedIds.sort());
    // Each writer's own events stay in the order it appended them.
    for (const w of ["w1", "w2"]) {
      const own = events.filter((e) => e.id.startsWith(`${w}-`)).map((e) => Number(e.id.split("-")[1]));
      expect(own).toEqual(Array.from({ length: n }, (_, i) => i));
    }
    // Both writers read, pause, then append, from a shared start: they collide on nearly every
    // round, so zero conflicts would mean the expected-revision check is not working.
    const conflicts = counts.reduce((sum, c) => sum + c.conflicts, 0);
    console.info(`two-process appenders: ${JSON.stringify(counts)}`);
    expect(conflicts).toBeGreaterThan(0);
    // Batches go 1, 2, 1, 2, ...: 60 events take 40; every attempt past those was a conflict.
    for (const c of counts) expect([c.batches, c.attempts]).toEqual([40, 40 + c.conflicts]);
  });

  it("lets two processes append to distinct streams with any, creating the file together", async () => {
    const path = join(dir, "fresh", "events.db");
    const n = 50;
    const counts = await together(dir, [
      [path, "stream-a", "a", String(n), "any"],
      [path, "stream-b", "b", String(n), "any"],
    ]);
    expect(counts.map((c) => [c.appended, c.conflicts])).toEqual([
      [n, 0],
      [n, 0],
    ]);
    const store = SqliteEventStore.open(path);
    for (const [stream, w] of [
      ["stream-a", "a"],
      ["stream-b", "b"],
    ] as const) {
      const events = await store.readStream(stream);
      expect(events.map((e) => [e.revision, e.id])).toEqual(
        Array.from({ length: n }, (_, i) => [i, `${w}-${i}`]),
      );
    }
    const all = await store.readAll();
    expect(all).toHaveLength(2 * n);
    expect(new Set(all.map((e) => e.position)).size).toBe(2 * n);
    expect((await store.listStreams()).map((s) => [s.stream, s.lastRevision]).sort()).toEqual([
      ["stream-a", n - 1],
      ["stream-b", n - 1],
    ]);
    await store.close();
  });
});
