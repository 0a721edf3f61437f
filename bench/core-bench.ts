// `npm run bench [-- SECTION…]`: every figure against a baseline measured in the same run on this machine.
// Sections: store, workspace, workspace-overlay, limits, pg, tools, workers, modules, goal (default: all). `npm run bench -- store tools` runs two.
import { mkdir, writeFile } from "node:fs/promises";
import { type BenchResult, formatBenchTable } from "./bench-result.js";
import { benchGoalTurn } from "./goal-turn-bench.js";
import { benchLimits } from "./limits-bench.js";
import { benchModules } from "./modules-bench.js";
import { benchPgStore } from "./pg-store-bench.js";
import { benchStore } from "./store-bench.js";
import { benchTools } from "./tool-bench.js";
import { benchWorkers } from "./workers-bench.js";
import { benchWorkspace } from "./workspace-bench.js";
import { benchWorkspaceOverlay, overlayBenchSize } from "./workspace-overlay-bench.js";

const sections: Record<string, { title: string; run: () => Promise<BenchResult[]> }> = {
  store: { title: "event store: appends through EventStore vs raw better-sqlite3 inserts", run: benchStore },
  workspace: {
    title: "workspace: observation vs git status, gate environment vs cp -a (20,000 files)",
    run: benchWorkspace,
  },
  "workspace-overlay": {
    title: `overlay workspace: observation vs git status, new files vs the builder, run set-up vs cp -a (${overlayBenchSize})`,
    run: benchWorkspaceOverlay,
  },
  limits: {
    title: "limits: observing 100,000 small files and a 1 GiB sparse file, per second of the builder's time",
    run: benchLimits,
  },
  pg: {
    title: "postgres store: appends through PostgresEventStore vs raw pg inserts",
    run: benchPgStore,
  },
  tools: {
    title: "agent tools: per-call overhead of the sandbox and the event log vs the bare command",
    run: benchTools,
  },
  workers: {
    title: "run queue: queued trivial runs per minute with 1, 2 and 4 workers, claim latency",
    run: benchWorkers,
  },
  modules: {
    title: "modules: what one `run --oracle` on a folder store loads (compiled CLI; `npm run build` first)",
    run: benchModules,
  },
  goal: {
    title: "goal turn: stream reads, appends and git processes of one todo turn of examples/goal-csvcol",
    run: benchGoalTurn,
  },
};

const asked = process.argv.slice(2);
const unknown = asked.filter((name) => !(name in sections));
if (unknown.length > 0) {
  process.stderr.write(
    `bench: unknown section ${unknown.join(", ")}; the sections are ${Object.keys(sections).join(", ")}\n`,
  );
  process.exit(2);
}
const chosen = asked.length > 0 ? asked : Object.keys(sections);
const results: BenchResult[] = [];
for (const name of chosen) {
  const section = sections[name];
  if (section === undefined) continue;
  process.stderr.write(`${section.title} …\n`);
  results.push(...(await section.run()));
}
process.stdout.write(`${formatBenchTable(results)}\n`);
await mkdir("bench/out", { recursive: true });
await writeFile("bench/out/core-bench.json", `${JSON.stringify(results, null, 2)}\n`);
process.stdout.write("(medians of repeated runs; written to bench/out/core-bench.json)\n");
