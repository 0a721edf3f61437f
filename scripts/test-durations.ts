// Writes test/durations.json from a vitest JSON report: each test file's wall time in seconds. The suite's
// sequencer (test/support/longest-first.ts) starts the longest files first, so no long file is left to run
// alone at the end. Refresh after adding or slowing a test file:
//   npx vitest run --reporter=json --outputFile=/tmp/vitest.json && npm run test:durations -- /tmp/vitest.json
import { readFileSync, writeFileSync } from "node:fs";
import { relative, resolve } from "node:path";

const report = process.argv[2];
if (!report) {
  console.error("usage: npm run test:durations -- REPORT.json (a vitest --reporter=json output)");
  process.exit(2);
}
interface FileResult {
  name: string;
  startTime: number;
  endTime: number;
}
const root = resolve(import.meta.dirname, "..");
const { testResults } = JSON.parse(readFileSync(report, "utf8")) as { testResults: FileResult[] };
const seconds: Record<string, number> = {};
for (const r of [...testResults].sort((a, b) => a.name.localeCompare(b.name)))
  seconds[relative(root, r.name)] = Math.round((r.endTime - r.startTime) / 100) / 10;
writeFileSync(resolve(root, "test", "durations.json"), `${JSON.stringify(seconds, null, 2)}\n`);
console.log(`test/durations.json: ${Object.keys(seconds).length} files`);
