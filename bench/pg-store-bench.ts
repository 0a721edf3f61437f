import { randomBytes } from "node:crypto";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import pg from "pg";
import type { LoopgateEvent } from "../src/core/events/loopgate-event.js";
import { PostgresEventStore } from "../src/store/postgres/postgres-event-store.js";
import { type BenchResult, formatBenchTable } from "./bench-result.js";

// The server's maintenance database; the bench creates its own database there and drops it after.
const ADMIN_URL = process.env.LOOPGATE_BENCH_PG ?? "postgres://postgres@127.0.0.1:5432/postgres";
// Each commit waits for the WAL flush, so batch size 1 is bound by the disk: few events there.
const CASES = [
  { batchSize: 1, events: 300 },
  { batchSize: 10, events: 2_000 },
  { batchSize: 100, events: 10_000 },
];
const REPEATS = 3;
const TARGET_RATIO = 0.5;

let runId = 0;

function events(count: number): LoopgateEvent[] {
  const run = `p${runId++}`;
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

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** A raw `pg` insert of one batch into `pgSchema.events`, one transaction and one multi-row INSERT. */
async function insertRaw(client: pg.Client, pgSchema: string, batch: LoopgateEvent[], n: number) {
  const values: unknown[] = [];
  const rows = batch.map((e, i) => {
    values.push(n + i + 1, "bench", n + i, e.id, e.type, JSON.stringify(e.data), JSON.stringify(e.meta));
    const b = i * 7;
    return `($${b + 1}, $${b + 2}, $${b + 3}, $${b + 4}, $${b + 5}, $${b + 6}, $${b + 7}, now())`;
  });
  await client.query("BEGIN");
  await client.query(
    `INSERT INTO ${pgSchema}.events (position, stream, revision, id, type, data, meta, recorded_at) VALUES ${rows.join(", ")}`,
    values,
  );
  await client.query("COMMIT");
}

/**
 * Events per second through PostgresEventStore (zod, retry check, revision check, position lock, index)
 * and of plain `pg` inserts of the same rows into identical tables (the floor any store on this server
 * pays), each on its own connection. The two alternate batch by batch, and take turns going first, so a
 * burst of load on this shared machine slows both alike instead of whichever side happened to be running.
 */
async function timeBoth(
  url: string,
  schemas: [string, string],
  batches: LoopgateEvent[][],
): Promise<{ ours: number; raw: number }> {
  const [oursSchema, rawSchema] = schemas;
  const store = await PostgresEventStore.open(url, { pgSchema: oursSchema, maxConnections: 1 });
  await (await PostgresEventStore.open(url, { pgSchema: rawSchema })).close(); // identical tables
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  let last = -1;
  let n = 0;
  let oursMs = 0;
  let rawMs = 0;
  const ours = async (batch: LoopgateEvent[]) => {
    const started = performance.now();
    last = (await store.append("bench", batch, last === -1 ? "no_stream" : last)).lastRevision;
    oursMs += performance.now() - started;
  };
  const raw = async (batch: LoopgateEvent[]) => {
    const started = performance.now();
    await insertRaw(client, rawSchema, batch, n);
    rawMs += performance.now() - started;
    n += batch.length;
  };
  for (const [k, batch] of batches.entries()) {
    if (k % 2 === 0) {
      await ours(batch);
      await raw(batch);
    } else {
      await raw(batch);
      await ours(batch);
    }
  }
  await store.close();
  await client.end();
  return { ours: (last + 1) / (oursMs / 1000), raw: n / (rawMs / 1000) };
}

async function admin(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: ADMIN_URL });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

/** Appends per second through PostgresEventStore against raw `pg` inserts, per batch size; [] without a server. */
export async function benchPgStore(): Promise<BenchResult[]> {
  const name = `loopgate_bench_${randomBytes(4).toString("hex")}`;
  try {
    await admin(`CREATE DATABASE ${name}`);
  } catch (e) {
    process.stderr.write(
      `  skipped: no PostgreSQL at ${ADMIN_URL} (${(e as Error).message}); set LOOPGATE_BENCH_PG\n`,
    );
    return [];
  }
  const u = new URL(ADMIN_URL);
  u.pathname = `/${name}`;
  const url = u.toString();
  let schema = 0;
  const fresh = () => `b${schema++}`;
  try {
    const results: BenchResult[] = [];
    for (const { batchSize, events: count } of CASES) {
      // One unmeasured round, so warm-up is not charged to either side.
      await timeBoth(url, [fresh(), fresh()], chunks(events(Math.min(count, 200)), batchSize));
      const ours: number[] = [];
      const raw: number[] = [];
      for (let i = 0; i < REPEATS; i++) {
        const r = await timeBoth(url, [fresh(), fresh()], chunks(events(count), batchSize));
        ours.push(r.ours);
        raw.push(r.raw);
      }
      const loopgate = median(ours);
      const baseline = median(raw);
      const ratio = loopgate / baseline;
      results.push({
        metric: `postgres store append, batch ${batchSize}`,
        unit: "events/s",
        loopgate,
        baseline,
        ratio,
        target: `≥ ${TARGET_RATIO}× raw pg`,
        met: ratio >= TARGET_RATIO,
        note: `${count} events, median of ${REPEATS}, one connection each, alternated batch by batch, local server`,
      });
    }
    return results;
  } finally {
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  console.log(formatBenchTable(await benchPgStore()));
}
