// Writes test/durations.json: each test file's wall time in seconds, hooks included, as vitest's own
// results cache recorded it in the last run (node_modules/.vite/vitest/<hash>/results.json). The suite's
// sequencer (test/support/longest-first.ts) starts the longest files first, so no long file is left to run
// alone at the end. Refresh after a whole `npm test` when files were added or got slower:
//   npm run test:durations            (this checkout's cache)
//   npm run test:durations -- FILE    (another checkout's results.json)
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

const file = process.argv[2] ?? cacheFile();
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
