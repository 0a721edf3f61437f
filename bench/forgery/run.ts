// `npm run bench:forgery [-- --only a,b] [--concurrency N]`: the forged-completion benchmark. Runs every
// scenario of bench/forgery/forgery.yaml under four completion policies through the experiment runner,
// prints forged runs caught and honest runs accepted per policy and, per scenario, which policy was
// fooled or falsely rejected; writes the table to bench/out/forgery.json. Exit 1 when loopgate got any
// scenario wrong (each such miss is a loopgate bug), else 0.
import { mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { runForgeryBench } from "./forgery.js";
import { formatForgeryTable } from "./table.js";

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
const { experiment, table } = await runForgeryBench({
  outDir,
  ...(only ? { only } : {}),
  ...(concurrency ? { concurrency } : {}),
  progress: (line) => process.stderr.write(`${line}\n`),
});
process.stdout.write(`\n${formatForgeryTable(table)}`);
await mkdir("bench/out", { recursive: true });
await writeFile("bench/out/forgery.json", `${JSON.stringify(table, null, 2)}\n`);
process.stdout.write(
  `(${(experiment.duration_ms / 1000).toFixed(0)} s; table in bench/out/forgery.json; runs and their event logs in ${outDir}; inspect one with loopgate events RUN --store ${outDir}/runs/SCENARIO/seed-1/ARM)\n`,
);
process.exitCode = table.target_met ? 0 : 1;
