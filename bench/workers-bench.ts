// Worker throughput and claim latency of the Postgres run queue (`npm run bench -- workers`; needs
// `npm run build`, since the workers are real `loopgate worker` processes). Every figure beside a
// baseline measured in the same run: the same trivial runs done one after another in this process
// (no queue, no worker processes), and one claim statement's own round trip. Idle workers wake on the
// queue's NOTIFY; the same workers with the notify trigger switched off (poll only, the 1 s fallback)
// are measured in the same run, so the gain is a comparison, not a memory.
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { chooseBuilder } from "../src/cli/commands/choose-builder.js";
import { runSettings } from "../src/cli/commands/run-settings.js";
import type { RunFlags } from "../src/runner/host/run-flags.js";
import { runTask } from "../src/runner/run/run-task.js";
import { loadTask } from "../src/runner/task-source/load-task.js";
import { PostgresEventStore } from "../src/store/postgres/postgres-event-store.js";
import type { BenchResult } from "./bench-result.js";

const ADMIN_URL = process.env.LOOPGATE_BENCH_PG ?? "postgres://postgres@127.0.0.1:5432/postgres";
const BIN = resolve("bin/loopgate.js");
/** Runs per measurement, repetitions (the median is reported), worker counts. */
const RUNS = 6;
const REPEATS = 3;
const WORKERS = [1, 2, 4];
/** Claim latency: jobs submitted one at a time to idle workers, this far apart. */
const LATENCY_JOBS = 12;
const LATENCY_GAP_MS = 350;
/** An idle worker polls every min(1 s, lease / 3) when no notification wakes it: with the default 30 s lease, every second. */
const POLL_MS = 1000;
/** A claim woken by a notification: a NOTIFY's delivery and one claim, far under one poll. */
const NOTIFY_TARGET_MS = 250;

/** How idle workers learn of a job: the queue's notification, or (trigger off) only the idle poll. */
type Wake = "notify" | "poll";

/** Switches the queue's notify trigger (migration 7) on or off for every worker at once. */
async function setWake(store: PostgresEventStore, wake: Wake): Promise<void> {
  await store.withClient((c) =>
    c.query(
      `ALTER TABLE ${store.pgSchema}.run_queue ${wake === "notify" ? "ENABLE" : "DISABLE"} TRIGGER run_queue_notify`,
    ),
  );
}
const BUILDER = "sh -c 'echo ok > out.txt'";

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
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

/** A task whose builder writes one file and whose one gate checks it: the run is all overhead. */
function trivialTask(dir: string): string {
  mkdirSync(join(dir, "repo"), { recursive: true });
  writeFileSync(join(dir, "repo", "seed.txt"), "seed\n");
  writeFileSync(
    join(dir, "task.yaml"),
    `id: trivial\nprompt: Write "ok" into out.txt.\nworkspace: ./repo\ndeliverables: ["out.txt"]\ngates:\n  - id: has-ok\n    run: ["sh", "-c", "grep -qx ok out.txt"]\n    timeout: 10s\n`,
  );
  return join(dir, "task.yaml");
}

/** Runs per minute of `RUNS` trivial runs one after another in this process, on the same store. */
async function sequentialInProcess(store: PostgresEventStore, url: string, task: string): Promise<number> {
  const loaded = loadTask(task);
  const flags: RunFlags = { builder: BUILDER, store: url };
  const s = runSettings(loaded, flags);
  const started = performance.now();
  for (let i = 0; i < RUNS; i++) {
    const env = await runTask({
      loaded,
      builder: await chooseBuilder(loaded, flags),
      store,
      localDir: s.localDir,
      sandbox: s.sandbox,
    });
    if (env.status !== "SUCCESS") throw new Error(`the trivial run ended ${env.status}: ${env.reason}`);
  }
  return (RUNS / ((performance.now() - started) / 1000)) * 60;
}

function startWorkers(url: string, n: number, tag: string): ChildProcess[] {
  return Array.from({ length: n }, (_, i) =>
    spawn(process.execPath, [BIN, "worker", "--store", url, "--id", `bench-${tag}-${i}`], {
      stdio: ["ignore", "ignore", "ignore"],
    }),
  );
}

const exited = (c: ChildProcess) =>
  new Promise<void>((r) => (c.exitCode !== null || c.signalCode !== null ? r() : c.on("close", () => r())));

async function submit(store: PostgresEventStore, task: string, n: number): Promise<string[]> {
  const loaded = loadTask(task);
  const ids: string[] = [];
  for (let i = 0; i < n; i++)
    ids.push(
      (
        await store.queue().submit({
          taskPath: loaded.file,
          taskDigest: loaded.digest,
          options: { cwd: process.cwd(), builder: BUILDER },
        })
      ).jobId,
    );
  return ids;
}

/**
 * Runs per minute of `RUNS` queued runs finished by `n` worker processes, from the submit to the last
 * finish: the workers are started, warmed by one job each and idle first (their start and sandbox
 * self-test are not counted; with the notify trigger on, the first claim does not wait for an idle poll).
 */
async function queued(
  store: PostgresEventStore,
  url: string,
  task: string,
  n: number,
  tag: string,
): Promise<number> {
  const workers = startWorkers(url, n, tag);
  try {
    await live(store, n);
    // One unmeasured job per worker (idle workers each take one): its sandbox self-test, once per process.
    await submit(store, task, n);
    while ((await store.queue().unfinished()) > 0) await sleep(25);
    const started = performance.now();
    await submit(store, task, RUNS);
    while ((await store.queue().unfinished()) > 0) await sleep(25);
    const seconds = (performance.now() - started) / 1000;
    const failed = (await store.queue().list()).filter(
      (j) => j.state === "finished" && j.status !== "SUCCESS",
    );
    if (failed.length)
      throw new Error(`queued trivial runs did not succeed: ${failed.map((j) => j.status).join("; ")}`);
    return (RUNS / seconds) * 60;
  } finally {
    await stop(workers);
  }
}

/** Waits until `n` workers have announced themselves (and are idle). */
async function live(store: PostgresEventStore, n: number): Promise<void> {
  while ((await store.queue().liveWorkers()).length < n) await sleep(50);
}

async function stop(workers: ChildProcess[]): Promise<void> {
  for (const w of workers) w.kill("SIGTERM");
  await Promise.all(workers.map(exited));
}

/** Enqueue → claimed (the database's own two timestamps) for jobs handed one at a time to 2 idle workers. */
async function claimLatency(store: PostgresEventStore, url: string, task: string): Promise<number[]> {
  const workers = startWorkers(url, 2, "lat");
  try {
    await live(store, 2);
    const ids: string[] = [];
    for (let i = 0; i < LATENCY_JOBS; i++) {
      ids.push(...(await submit(store, task, 1)));
      await sleep(LATENCY_GAP_MS + Math.floor(Math.random() * 100));
    }
    while ((await store.queue().unfinished()) > 0) await sleep(50);
    const rows = await store.withClient((c) =>
      c.query(
        `SELECT extract(epoch FROM claimed_at - submitted_at) * 1000 AS ms FROM ${store.pgSchema}.run_queue WHERE job_id = ANY($1)`,
        [ids],
      ),
    );
    return rows.rows.map((r) => Number(r.ms));
  } finally {
    await stop(workers);
  }
}

/** One claim statement's round trip with a job free to take (median of 20): the floor of a claim. */
async function rawClaim(store: PostgresEventStore, task: string): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < 20; i++) {
    const [id] = await submit(store, task, 1);
    const t0 = performance.now();
    const claim = await store.queue().claim("bench-raw", 60_000);
    times.push(performance.now() - t0);
    if (!claim || claim.job.jobId !== id) throw new Error("the raw claim took another job");
    await store.queue().finish(claim.job.jobId, claim.token, "BENCH");
  }
  return median(times);
}

export async function benchWorkers(): Promise<BenchResult[]> {
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
  const dir = mkdtempSync(join(tmpdir(), "loopgate-bench-workers-"));
  const store = await PostgresEventStore.open(url);
  try {
    const task = trivialTask(dir);
    // Unmeasured warm-up: the sandbox self-test, the page cache, the connection pools.
    await sequentialInProcess(store, url, task);
    const base: number[] = [];
    const per = new Map<number, number[]>(WORKERS.map((n) => [n, []]));
    const pollOnly: number[] = [];
    for (let r = 0; r < REPEATS; r++) {
      base.push(await sequentialInProcess(store, url, task));
      for (const n of WORKERS) per.get(n)?.push(await queued(store, url, task, n, `${r}-${n}`));
      await setWake(store, "poll");
      pollOnly.push(await queued(store, url, task, 1, `${r}-poll`));
      await setWake(store, "notify");
    }
    const baseline = median(base);
    const cores = cpus().length;
    const limit =
      `${cores} cores (load ${loadavg()[0]?.toFixed(1)}): each run is a worker's node, the bubblewrap builder and gate ` +
      "processes and PostgreSQL's commits; past one worker per core they share the CPUs";
    const results: BenchResult[] = WORKERS.map((n) => {
      const loopgate = median(per.get(n) ?? []);
      return {
        metric: `queued trivial runs, ${n} worker${n > 1 ? "s" : ""}`,
        unit: "runs/min",
        loopgate,
        baseline,
        ratio: loopgate / baseline,
        target: "report (baseline: the same runs in sequence, in-process)",
        met: true,
        note:
          n === WORKERS.at(-1)
            ? `limited by ${limit}`
            : `${RUNS} runs × ${REPEATS}, median; warm idle workers woken by NOTIFY`,
      };
    });
    const polled = median(pollOnly);
    results.push({
      metric: "queued trivial runs, 1 worker, poll only",
      unit: "runs/min",
      loopgate: polled,
      baseline,
      ratio: polled / baseline,
      target: "report (the notify trigger off: idle workers find jobs by the 1 s poll)",
      met: true,
      note: `${RUNS} runs × ${REPEATS}, median; what the 1-worker row was before NOTIFY`,
    });
    const raw = await rawClaim(store, task);
    for (const wake of ["notify", "poll"] as const) {
      await setWake(store, wake);
      const latencies = await claimLatency(store, url, task);
      for (const [p, value] of [
        [50, percentile(latencies, 50)],
        [95, percentile(latencies, 95)],
      ] as const)
        results.push({
          metric: `claim latency p${p} (enqueue → claimed)${wake === "poll" ? ", poll only" : ""}`,
          unit: "ms",
          loopgate: value,
          baseline: raw,
          ratio: value / raw,
          target:
            wake === "notify"
              ? `≤ ${NOTIFY_TARGET_MS} ms (a notification)`
              : `≤ ${POLL_MS} ms (one idle poll)`,
          met: value <= (wake === "notify" ? NOTIFY_TARGET_MS : POLL_MS + 250),
          note:
            wake === "notify"
              ? `${latencies.length} jobs to 2 idle workers woken by NOTIFY; baseline: one claim statement's round trip`
              : `the notify trigger off: limited by the idle poll (every ${POLL_MS} ms), not by the claim`,
        });
    }
    await setWake(store, "notify");
    return results;
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
    await admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).catch(() => {});
  }
}
