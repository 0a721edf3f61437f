// Writes test/durations.json: each test file's wall time in seconds, hooks included, as vitest's own
// results cache recorded it in the last run (node_modules/.vite/vitest/<hash>/results.json). The suite's
// sequencer (test/support/longest-first.ts) starts the longest files first, so no long file is left to run
// alone at the end. Refresh after a whole `npm test` when files were added or got slower:
//   npm run test:durations            (this checkout's cache)
//   npm run test:durations -- FILE    (another checkout's results.json)
// With `--cpu LOG` it also writes test/cpu-seconds.json, each file's CPU seconds, from the log a run made
// with LOOPGATE_TEST_CPU_LOG=LOG (test/support/file-cpu.ts): the sequencer keeps files that mostly wait apart.
//   LOOPGATE_TEST_CPU_LOG=/tmp/cpu.jsonl npm test && npm run test:durations -- --cpu /tmp/cpu.jsonl
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";

const root = resolve(import.meta.dirname, "..");

function cacheFile(): string {
  const dir = join(root, "node_modules", ".vite", "vitest");
  let hashes: string[] = [];
  try {
    hashes = readdirSync(dir);
  } catch {
    // no cache yet
  }
  const found = hashes.map((h) => join(dir, h, "results.json"));
  if (found.length !== 1) {
    console.error(
      `expected one vitest results cache under ${dir}, found ${found.length}; run the whole suite first, or name the file`,
    );
    process.exit(2);
  }
  return found[0] as string;
}

const args = process.argv.slice(2);
const cpuAt = args.indexOf("--cpu");
const cpuLog = cpuAt >= 0 ? args.splice(cpuAt, 2)[1] : undefined;
if (cpuAt >= 0 && !cpuLog) {
  console.error("--cpu needs the log a run wrote with LOOPGATE_TEST_CPU_LOG=LOG");
  process.exit(2);
}
const file = args[0] ?? cacheFile();
const { results } = JSON.parse(readFileSync(file, "utf8")) as { results?: unknown };
if (!Array.isArray(results)) {
  console.error(
    `${file} is not vitest's results cache (a "results" list of [file, { duration }]): a reporter's --outputFile is not one; name node_modules/.vite/vitest/<hash>/results.json`,
  );
  process.exit(2);
}
const seconds: Record<string, number> = {};
for (const [key, { duration }] of results as [string, { duration?: number }][]) {
  if (typeof duration !== "number") continue;
  const path = key.slice(key.indexOf(":") + 1); // "<project>:<path>"
  seconds[path] = Math.round(duration / 100) / 10;
}
const sorted = Object.fromEntries(Object.entries(seconds).sort(([a], [b]) => a.localeCompare(b)));
writeFileSync(join(root, "test", "durations.json"), `${JSON.stringify(sorted, null, 2)}\n`);
console.log(`test/durations.json: ${Object.keys(sorted).length} files, from ${file}`);

if (cpuLog) {
  const cpu: Record<string, number> = {};
  for (const [i, line] of readFileSync(cpuLog, "utf8").split("\n").entries()) {
    if (line.trim() === "") continue;
    let entry: { file?: unknown; cpu?: unknown };
    try {
      entry = JSON.parse(line);
    } catch {
      console.error(`${cpuLog}:${i + 1}: not JSON`);
      process.exit(2);
    }
    if (typeof entry.file !== "string" || typeof entry.cpu !== "number") {
      console.error(`${cpuLog}:${i + 1}: expected {"file": "...", "cpu": seconds}`);
      process.exit(2);
    }
    cpu[entry.file] = entry.cpu;
  }
  const byName = Object.fromEntries(Object.entries(cpu).sort(([a], [b]) => a.localeCompare(b)));
  writeFileSync(join(root, "test", "cpu-seconds.json"), `${JSON.stringify(byName, null, 2)}\n`);
  console.log(`test/cpu-seconds.json: ${Object.keys(byName).length} files, from ${cpuLog}`);
}
