// `npm run bench`: every figure against a baseline measured in the same run on this machine.
import { mkdir, writeFile } from "node:fs/promises";
import { type BenchResult, formatBenchTable } from "./bench-result.js";
import { benchLimits } from "./limits-bench.js";
import { benchPgStore } from "./pg-store-bench.js";
import { benchStore } from "./store-bench.js";
import { benchTools } from "./tool-bench.js";
import { benchWorkspace } from "./workspace-bench.js";

const results: BenchResult[] = [];
process.stderr.write("event store: appends through EventStore vs raw better-sqlite3 inserts …\n");
results.push(...(await benchStore()));
process.stderr.write("postgres store: appends through PostgresEventStore vs raw pg inserts …\n");
results.push(...(await benchPgStore()));
process.stderr.write("workspace: observation vs git status, gate environment vs cp -a (20,000 files) …\n");
results.push(...(await benchWorkspace()));
process.stderr.write(
  "limits: observing 100,000 small files and a 1 GiB sparse file, per second of the builder's time …\n",
);
results.push(...(await benchLimits()));
process.stderr.write(
  "agent tools: per-call overhead of the sandbox and the event log vs the bare command …\n",
);
results.push(...(await benchTools()));
process.stdout.write(`${formatBenchTable(results)}\n`);
await mkdir("bench/out", { recursive: true });
await writeFile("bench/out/core-bench.json", `${JSON.stringify(results, null, 2)}\n`);
process.stdout.write("(medians of repeated runs; written to bench/out/core-bench.json)\n");
