// Loopgate's cost per second of the builder's own time to make a workspace that floods observation:
// 100,000 small files, and one 1 GiB sparse file. "Before" is the unbounded path (no limits: every file
// hashed and copied into the blob store, a sparse file copied dense, as the code before the limits did);
// "after" is the same observation under the default limits. Medians of RUNS runs.
import { execFileSync } from "node:child_process";
import {
  closeSync,
  copyFileSync,
  ftruncateSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { DEFAULT_LIMITS, LimitExceededError, type ObservationLimits } from "../src/core/task/limits.js";
import { BlobStore } from "../src/workspace/blob-store.js";
import { ObservationStore } from "../src/workspace/observation-store.js";
import { WorkspaceObserver } from "../src/workspace/observer.js";
import { type BenchResult, formatBenchTable } from "./bench-result.js";

const FILES = Number(process.env.LOOPGATE_BENCH_FLOOD_FILES ?? 100_000);
const RUNS = Number(process.env.LOOPGATE_BENCH_FLOOD_RUNS ?? 3);
const GiB = 1024 ** 3;
const DEFAULTS: ObservationLimits = {
  files: DEFAULT_LIMITS.files,
  totalBytes: DEFAULT_LIMITS.total_bytes,
  fileBytes: DEFAULT_LIMITS.file_bytes,
};

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
const diskBytes = (p: string) =>
  Number(execFileSync("du", ["-s", "-B1", p], { encoding: "utf8" }).split("\t")[0]);

/** What the run does after the builder: observe (with a stat cache file), keep the observation and its blobs. */
async function observeAndKeep(ws: string, keep: string, limits: ObservationLimits | undefined) {
  const observer = new WorkspaceObserver(ws, {
    cacheFile: path.join(keep, "observer-cache.json"),
    ...(limits ? { limits } : {}),
  });
  try {
    const obs = await observer.observe();
    await new ObservationStore(path.join(keep, "observations")).put(obs);
    await new BlobStore(path.join(keep, "blobs")).save(obs, ws);
    return "observed";
  } catch (e) {
    if (e instanceof LimitExceededError) return `limit_exceeded (${e.limit})`;
    throw e;
  }
}

/** The builder's part: 100,000 files of ~40 bytes in 100 directories. */
function makeFlood(ws: string) {
  for (let d = 0; d < 100; d++) {
    mkdirSync(path.join(ws, `d${d}`));
    for (let f = 0; f < FILES / 100; f++)
      writeFileSync(path.join(ws, `d${d}`, `f${f}.txt`), `file ${d}/${f}\n`);
  }
}

/** The builder's part: one 1 GiB file of holes, which costs it one ftruncate. */
function makeSparse(ws: string) {
  const fd = openSync(path.join(ws, "huge.bin"), "w");
  ftruncateSync(fd, GiB);
  closeSync(fd);
}

interface Sample {
  builderMs: number;
  loopgateMs: number;
  keptBytes: number;
  outcome: string;
}

async function sample(make: (ws: string) => void, cost: (ws: string, keep: string) => Promise<string>) {
  const root = mkdtempSync(path.join(tmpdir(), "lg-flood-"));
  try {
    const ws = path.join(root, "ws");
    const keep = path.join(root, "keep");
    mkdirSync(ws);
    mkdirSync(keep);
    let t = performance.now();
    make(ws);
    const builderMs = performance.now() - t;
    t = performance.now();
    const outcome = await cost(ws, keep);
    const loopgateMs = performance.now() - t;
    return { builderMs, loopgateMs, keptBytes: diskBytes(keep), outcome };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

async function measure(
  metric: string,
  make: (ws: string) => void,
  cost: (ws: string, keep: string) => Promise<string>,
  target: { perBuilderSecond: number; text: string },
): Promise<BenchResult> {
  const samples: Sample[] = [];
  for (let i = 0; i < RUNS; i++) {
    const s = await sample(make, cost);
    samples.push(s);
    process.stderr.write(
      `  ${metric} #${i + 1}: loopgate ${Math.round(s.loopgateMs)} ms, builder ${Math.round(s.builderMs)} ms, ${s.outcome}, kept ${s.keptBytes} B\n`,
    );
  }
  const loopgate = median(samples.map((s) => s.loopgateMs));
  const baseline = median(samples.map((s) => s.builderMs));
  // Load on a shared machine moves both times together, so the ratio is taken per run, then its median.
  const ratio = median(samples.map((s) => s.loopgateMs / Math.max(s.builderMs, 0.001)));
  const kept = median(samples.map((s) => s.keptBytes));
  return {
    metric,
    unit: "ms",
    loopgate,
    baseline,
    ratio,
    target: target.text,
    met: ratio <= target.perBuilderSecond,
    note: `baseline: the builder making it; ${samples[0]?.outcome}; kept on disk ${(kept / 1024 ** 2).toFixed(1)} MiB`,
  };
}

/** The old blob store's copy: Node's copyFile, which writes every zero of a sparse file. */
async function observeAndKeepDense(ws: string, keep: string) {
  const obs = await new WorkspaceObserver(ws).observe();
  await new ObservationStore(path.join(keep, "observations")).put(obs);
  mkdirSync(path.join(keep, "blobs"));
  for (const e of obs.entries)
    if (e.type === "file") copyFileSync(path.join(ws, e.path), path.join(keep, "blobs", e.hash));
  return "observed, stored dense";
}

export async function benchLimits(): Promise<BenchResult[]> {
  const n = FILES.toLocaleString("en-US");
  return [
    await measure(
      `${n} small files, before (no limits)`,
      makeFlood,
      (ws, keep) => observeAndKeep(ws, keep, undefined),
      {
        perBuilderSecond: Number.POSITIVE_INFINITY,
        text: "(reference)",
      },
    ),
    await measure(
      `${n} small files, after (default limits)`,
      makeFlood,
      (ws, keep) => observeAndKeep(ws, keep, DEFAULTS),
      {
        perBuilderSecond: 5,
        text: "≤ 5 s per builder s",
      },
    ),
    await measure("1 GiB sparse file, before (old dense copy)", makeSparse, observeAndKeepDense, {
      perBuilderSecond: Number.POSITIVE_INFINITY,
      text: "(reference)",
    }),
    await measure(
      "1 GiB sparse file, after (default limits)",
      makeSparse,
      (ws, keep) => observeAndKeep(ws, keep, DEFAULTS),
      {
        perBuilderSecond: 100,
        text: "refused unread",
      },
    ),
    await measure(
      "1 GiB sparse file, allowed by the task",
      makeSparse,
      (ws, keep) => observeAndKeep(ws, keep, { ...DEFAULTS, fileBytes: 2 * GiB, totalBytes: 2 * GiB }),
      { perBuilderSecond: Number.POSITIVE_INFINITY, text: "kept sparse" },
    ),
  ];
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  process.stdout.write(`${formatBenchTable(await benchLimits())}\n`);
}
