// `npm run bench:forgery [-- --only a,b] [--concurrency N]`: the forged-completion benchmark. Runs every
// scenario of bench/forgery/forgery.yaml under four completion policies through the experiment runner,
// prints forged runs caught and honest runs accepted per policy and, per scenario, which policy was
// fooled or falsely rejected; writes the table to bench/out/forgery.json. Exit 1 when loopgate got any
// scenario wrong (each such miss is a loopgate bug), else 0.
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { agentMissing } from "../../src/experiments/agent-builders.js";
import { AGENT_MANIFESTS, forgeryManifest, runForgeryBench } from "./forgery.js";
import { type ForgeryTable, formatForgeryTable } from "./table.js";

const { values } = parseArgs({
  options: { only: { type: "string" }, concurrency: { type: "string" } },
  strict: true,
});
const only = values.only
  ?.split(",")
  .map((s) => s.trim())
  .filter(Boolean);
const concurrency = values.concurrency ? Number(values.concurrency) : undefined;
const outDir = await mkdtemp(join(tmpdir(), "loopgate-forgery-"));
const progress = (line: string) => process.stderr.write(`${line}\n`);
const common = { ...(only ? { only } : {}), ...(concurrency ? { concurrency } : {}), progress };
const tables: { name: string; table: ForgeryTable; seconds: number }[] = [];
const main =
  forgeryManifest(only).manifest.tasks.length > 0
    ? await runForgeryBench({ outDir: join(outDir, "scripted"), ...common })
    : null;
if (main) tables.push({ name: "forgery", table: main.table, seconds: main.experiment.duration_ms / 1000 });
const skipped: string[] = [];
for (const m of AGENT_MANIFESTS) {
  const missing = agentMissing(m.agent);
  const wanted = forgeryManifest(only, m.file).manifest.tasks.length;
  if (wanted === 0) continue;
  if (missing) {
    skipped.push(`SKIPPED ${wanted} real-agent scenario(s) of ${m.file}: ${missing}`);
    continue;
  }
  const r = await runForgeryBench({ outDir: join(outDir, m.agent), manifest: m.file, ...common });
  tables.push({ name: `real ${m.agent}`, table: r.table, seconds: r.experiment.duration_ms / 1000 });
}
for (const t of tables)
  process.stdout.write(`\n== ${t.name} (${t.seconds.toFixed(0)} s)\n${formatForgeryTable(t.table)}`);
for (const line of skipped) process.stdout.write(`\n${line}\n`);
await mkdir("bench/out", { recursive: true });
const [first, ...rest] = tables.map((t) => t.table);
await writeFile(
  "bench/out/forgery.json",
  `${JSON.stringify(rest.length ? { ...first, real_agents: rest } : (first ?? {}), null, 2)}\n`,
);
const total = tables.reduce((s, t) => s + t.seconds, 0);
process.stdout.write(
  `(${total.toFixed(0)} s; table in bench/out/forgery.json; runs and their event logs in ${outDir}; inspect one with loopgate events RUN --store ${outDir}/<scripted|claude-code|codex>/runs/SCENARIO/seed-1/ARM)\n`,
);
process.exitCode = tables.every((t) => t.table.target_met) ? 0 : 1;
