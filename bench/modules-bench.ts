// `npm run bench -- modules`: which modules one `loopgate run TASK --oracle` on a folder (SQLite) store loads,
// from the compiled ES modules (dist/, after `npm run build`). A loader hook (bench/modules-hook.mjs) records
// every module URL the ES module loader loads; the figures are the project's own modules under dist/, those
// of the built-in agent (dist/agent/), of the Claude Code and Codex builders, of the PostgreSQL store
// (dist/store/postgres/), and the model and PostgreSQL packages (ai, @ai-sdk/*, pg). None of those is needed
// by an oracle run on SQLite; each is loaded only when a run chooses it (see store/open-store.ts and
// cli/commands/choose-builder.ts). The baseline is the same measurement on the tree before that change.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { BenchResult } from "./bench-result.js";

/** What one run loaded. */
export interface ModuleCensus {
  /** The project's modules under dist/ that were loaded. */
  loaded: number;
  /** The project's compiled modules under dist/ (those with a source file in src/). */
  total: number;
  /** Of `loaded`: under dist/agent/. */
  agent: number;
  /** Of `loaded`: under dist/builders/claude/ or dist/builders/codex/. */
  externalBuilders: number;
  /** Of `loaded`: the PostgreSQL store's modules. */
  postgres: number;
  /** The model and PostgreSQL packages loaded: `ai`, `@ai-sdk/*`, `pg`. */
  heavyPackages: string[];
  /** Every package under node_modules/ the ES module loader loaded a file of. */
  packages: string[];
}

/**
 * The figures measured on the tree before the lazy loading (commit 827f79e, built with tsc, the same
 * script and task): the PostgreSQL modules were then the flat files store/postgres-*, pg-*, run-queue*
 * and queue-listener, counted here under `postgres`.
 */
export const BEFORE: ModuleCensus & { label: string } = {
  label: "before (827f79e)",
  loaded: 245,
  total: 423,
  agent: 29,
  externalBuilders: 12,
  postgres: 6,
  heavyPackages: [
    "@ai-sdk/anthropic",
    "@ai-sdk/gateway",
    "@ai-sdk/openai",
    "@ai-sdk/openai-compatible",
    "@ai-sdk/provider",
    "@ai-sdk/provider-utils",
    "ai",
    "pg",
  ],
  packages: [],
};

const HEAVY = /^(ai|pg|@ai-sdk\/.+)$/;
/** The PostgreSQL store's modules: its room, or (before it had one) the flat files that became it. */
const POSTGRES = /^store\/(postgres\/|postgres-|pg-(append|prune|schema)\.js|run-queue|queue-listener\.js)/;

/** The package a node_modules path belongs to (`@ai-sdk/openai`, `pg`), or null. */
export function packageOf(path: string): string | null {
  const at = path.lastIndexOf("/node_modules/");
  if (at < 0) return null;
  const parts = path.slice(at + "/node_modules/".length).split("/");
  const first = parts[0] ?? "";
  return first.startsWith("@") ? `${first}/${parts[1] ?? ""}` : first;
}

function compiledModules(root: string): number {
  let n = 0;
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith(".js")) {
        // Only files whose source still exists: a stale file of a moved module is not part of the build.
        const source = join(root, "src", relative(join(root, "dist"), p)).replace(/\.js$/, ".ts");
        if (existsSync(source)) n++;
      }
    }
  };
  walk(join(root, "dist"));
  return n;
}

/** Counts what the URLs recorded for the tree at `root` name. */
export function census(urls: readonly string[], root: string): ModuleCensus {
  const dist = `${join(root, "dist")}/`;
  const own = new Set<string>();
  const packages = new Set<string>();
  for (const url of urls) {
    if (!url.startsWith("file://")) continue;
    const path = fileURLToPath(url);
    const pkg = packageOf(path);
    if (pkg !== null) packages.add(pkg);
    else if (path.startsWith(dist) && path.endsWith(".js")) own.add(path.slice(dist.length));
  }
  const count = (re: RegExp) => [...own].filter((f) => re.test(f)).length;
  const sorted = [...packages].sort();
  return {
    loaded: own.size,
    total: compiledModules(root),
    agent: count(/^agent\//),
    externalBuilders: count(/^builders\/(claude|codex)\//),
    postgres: count(POSTGRES),
    heavyPackages: sorted.filter((p) => HEAVY.test(p)),
    packages: sorted,
  };
}

/**
 * Runs `run TASK --oracle --store <tmp>` for a private copy of examples/sh-csvcol with the compiled CLI of
 * the tree at `root` (default: this one) and counts what it loaded. Throws when the run does not succeed:
 * a census of a failed run would count less than a real run loads.
 */
export function measureOracleRun(root = resolve(".")): ModuleCensus {
  const work = mkdtempSync(join(tmpdir(), "loopgate-bench-modules-"));
  try {
    cpSync(resolve("examples/sh-csvcol"), join(work, "task"), { recursive: true });
    const out = join(work, "modules.txt");
    const child = resolve("bench/modules-child.mjs");
    const task = join(work, "task", "task.yaml");
    const { LOOPGATE_STORE: _, ...env } = process.env;
    const r = spawnSync(
      process.execPath,
      [child, out, root, "run", task, "--oracle", "--store", join(work, "store")],
      { cwd: work, encoding: "utf8", env },
    );
    if (r.status !== 0)
      throw new Error(`run --oracle exited ${r.status}:\n${r.stdout}\n${r.stderr}`.slice(0, 4000));
    return census(readFileSync(out, "utf8").split("\n").filter(Boolean), root);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** The bench section: each figure beside the one before the change. */
export async function benchModules(): Promise<BenchResult[]> {
  if (!existsSync("dist/cli/main.js")) throw new Error("no dist/cli/main.js: run `npm run build` first");
  const now = measureOracleRun();
  const row = (metric: string, after: number, before: number, target: string, met: boolean, note = "") => ({
    metric: `run --oracle (SQLite): ${metric}`,
    unit: metric.startsWith("packages") ? "packages" : "modules",
    loopgate: after,
    baseline: before,
    ratio: before === 0 ? (after === 0 ? 1 : Number.POSITIVE_INFINITY) : after / before,
    target,
    met,
    note,
  });
  return [
    row(
      "project modules loaded",
      now.loaded,
      BEFORE.loaded,
      "< before",
      now.loaded < BEFORE.loaded,
      `of ${now.total} (${BEFORE.label}: of ${BEFORE.total})`,
    ),
    row("of them dist/agent/", now.agent, BEFORE.agent, "0", now.agent === 0),
    row(
      "of them dist/builders/claude|codex/",
      now.externalBuilders,
      BEFORE.externalBuilders,
      "0",
      now.externalBuilders === 0,
    ),
    row("of them dist/store/postgres/", now.postgres, BEFORE.postgres, "0", now.postgres === 0),
    row(
      "packages ai, @ai-sdk/*, pg",
      now.heavyPackages.length,
      BEFORE.heavyPackages.length,
      "0",
      now.heavyPackages.length === 0,
      now.heavyPackages.length ? now.heavyPackages.join(" ") : `all packages: ${now.packages.join(" ")}`,
    ),
  ];
}
