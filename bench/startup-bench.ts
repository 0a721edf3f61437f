// `npm run bench:startup [-- RUNS]`: the CPU one CLI process spends of its own (not its children's) for
// everyday commands, started from the compiled ES modules (the baseline) and from the one-file bundle with
// its V8 code cache (what bin/loopgate.js starts), plus the bundle without the cache to show what each
// part buys. Medians over RUNS starts (default 9), interleaved so machine load hits every variant alike.
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type BenchResult, formatBenchTable } from "./bench-result.js";

const RUNS = Number(process.argv[2] ?? process.env.BENCH_RUNS ?? 9);
const CHILD = resolve("bench/startup-child.mjs");
const MODES = ["modules", "bundle", "bundle-nocache"] as const;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? (s[m] ?? 0) : ((s[m - 1] ?? 0) + (s[m] ?? 0)) / 2;
};

/**
 * The environment without $LOOPGATE_STORE (every command here names its store with --store) and without
 * NODE_EXTRA_CA_CERTS: with it, Node parses every certificate it names at start (about 40 ms for a system
 * bundle), before any of loopgate's code runs, and that is not what is measured here.
 */
function benchEnv(): NodeJS.ProcessEnv {
  const { LOOPGATE_STORE: _, NODE_EXTRA_CA_CERTS: __, ...env } = process.env;
  return env;
}

/** One start: its own CPU in ms, read from fd 3. */
function start(mode: string, argv: readonly string[], cwd: string): number {
  const r = spawnSync(process.execPath, [CHILD, mode, ...argv], {
    cwd,
    stdio: ["ignore", "ignore", "pipe", "pipe"],
    encoding: "utf8",
    env: benchEnv(),
  });
  // A refusal costs less than the work: time only starts that did the command's work.
  if (r.status !== 0) throw new Error(`${mode} ${argv.join(" ")}: exit ${r.status}\n${r.stderr}`);
  const out = (r.output[3] ?? "").trim().split("\n").pop() ?? "";
  const ms = Number(out);
  if (!Number.isFinite(ms) || out === "")
    throw new Error(`${mode} ${argv.join(" ")}: no CPU figure\n${r.stderr}`);
  return ms;
}

const work = mkdtempSync(join(tmpdir(), "loopgate-bench-startup-"));
const store = join(work, "store");
// A copy: `task check` records the task's lock beside the task file, which must not touch the repository's.
cpSync(resolve("examples/js-slugify"), join(work, "js-slugify"), { recursive: true });
const task = join(work, "js-slugify", "task.yaml");
const commands: { name: string; argv: () => string[] }[] = [
  { name: "--version", argv: () => ["--version"] },
  { name: "--help", argv: () => ["--help"] },
  { name: "runs (a store with runs)", argv: () => ["runs", "--store", store] },
  { name: "task check --oracle (js-slugify)", argv: () => ["task", "check", task, "--store", store] },
  { name: "run --oracle (js-slugify)", argv: () => ["run", task, "--oracle", "--store", store] },
];
try {
  start("modules", ["run", task, "--oracle", "--store", store], work);
  const results: BenchResult[] = [];
  for (const c of commands) {
    const times: Record<string, number[]> = { modules: [], bundle: [], "bundle-nocache": [] };
    for (let i = 0; i < RUNS; i++) for (const m of MODES) times[m]?.push(start(m, c.argv(), work));
    const base = median(times.modules ?? []);
    const bundle = median(times.bundle ?? []);
    results.push({
      metric: `CPU of one CLI process: ${c.name}`,
      unit: "ms",
      loopgate: bundle,
      baseline: base,
      ratio: bundle / base,
      target: "≤ 0.7× modules",
      met: bundle / base <= 0.7,
      note: `bundle without code cache ${Math.round(median(times["bundle-nocache"] ?? []))} ms`,
    });
    process.stderr.write(`${c.name}: done\n`);
  }
  process.stdout.write(`${formatBenchTable(results)}\n`);
  process.stdout.write(
    `medians of ${RUNS} starts each; loopgate = bundle with code cache, baseline = ES modules\n`,
  );
} finally {
  rmSync(work, { recursive: true, force: true });
}
