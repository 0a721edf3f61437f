import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import Database from "better-sqlite3";
import type { LoopgateEvent } from "../src/core/events/loopgate-event.js";
import { SqliteEventStore } from "../src/store/sqlite/sqlite-event-store.js";
import { type BenchResult, formatBenchTable } from "./bench-result.js";

// synchronous=FULL makes every commit an fsync, so batch size 1 is bound by the disk:
// few events there, many where the per-event work shows.
const CASES = [
  { batchSize: 1, events: 300 },
  { batchSize: 10, events: 3_000 },
  { batchSize: 100, events: 20_000 },
];
const REPEATS = 5;
const TARGET_RATIO = 0.5;

let runId = 0;

function events(count: number): LoopgateEvent[] {
  const run = `b${runId++}`;
  return Array.from({ length: count }, (_, i) => ({
    id: `${run}-${i}`,
    type: "gate_run_finished",
    data: {
      attempt: 1 + (i % 3),
      gate_id: "unit",
      passed: i % 2 === 0,
      exit_code: i % 2,
      timed_out: false,
      error: null,
      duration_ms: 1234.5,
      log_excerpt: `ok ${i} - slugify keeps accented letters\n`.repeat(8),
      summary: "12 passed, 1 failed",
    },
    meta: { at: "2025-03-01T10:00:00.000Z", origin: "gate" },
  }));
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Events per second appended through SqliteEventStore (validation, revision check, index). */
async function timeLoopgate(path: string, batches: LoopgateEvent[][]): Promise<number> {
  const store = SqliteEventStore.open(path);
  let last = -1;
  const started = performance.now();
  for (const batch of batches) {
    last = (await store.append("bench", batch, last === -1 ? "no_stream" : last)).lastRevision;
  }
  const seconds = (performance.now() - started) / 1000;
  await store.close();
  return (last + 1) / seconds;
}

/** Events per second of plain inserts into the same table with the same pragmas: the floor any store pays. */
function timeRaw(path: string, batches: LoopgateEvent[][]): number {
  SqliteEventStore.open(path).close(); // identical schema and journal mode
  const db = new Database(path);
  db.pragma("busy_timeout = 5000");
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = FULL");
  db.pragma("foreign_keys = ON");
  const insert = db.prepare(
    "INSERT INTO events (stream, revision, id, type, data, meta, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
  );
  let revision = 0;
  const write = db.transaction((batch: LoopgateEvent[]) => {
    const at = new Date().toISOString();
    for (const e of batch) {
      insert.run("bench", revision++, e.id, e.type, JSON.stringify(e.data), JSON.stringify(e.meta), at);
    }
  });
  const started = performance.now();
  for (const batch of batches) write.immediate(batch);
  const seconds = (performance.now() - started) / 1000;
  db.close();
  return revision / seconds;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** Appends per second through SqliteEventStore against raw better-sqlite3 inserts, per batch size. */
export async function benchStore(): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), "loopgate-bench-"));
  let file = 0;
  const fresh = () => join(dir, `${file++}.db`);
  try {
    const results: BenchResult[] = [];
    for (const { batchSize, events: count } of CASES) {
      // One unmeasured round each, so JIT warm-up is not charged to whichever runs first.
      await timeLoopgate(fresh(), chunks(events(Math.min(count, 500)), batchSize));
      timeRaw(fresh(), chunks(events(Math.min(count, 500)), batchSize));
      const ours: number[] = [];
      const raw: number[] = [];
      for (let i = 0; i < REPEATS; i++) {
        // Alternate, so drift in disk or CPU speed hits both sides alike.
        ours.push(await timeLoopgate(fresh(), chunks(events(count), batchSize)));
        raw.push(timeRaw(fresh(), chunks(events(count), batchSize)));
      }
      const loopgate = median(ours);
      const baseline = median(raw);
      const ratio = loopgate / baseline;
      results.push({
        metric: `store append, batch ${batchSize}`,
        unit: "events/s",
        loopgate,
        baseline,
        ratio,
        target: `≥ ${TARGET_RATIO}× raw`,
        met: ratio >= TARGET_RATIO,
        note: `${count} events, median of ${REPEATS}, WAL + synchronous=FULL`,
      });
    }
    return results;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  console.log(formatBenchTable(await benchStore()));
}
