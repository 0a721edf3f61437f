// With LOOPGATE_TEST_CPU_LOG=FILE, appends each test file's CPU seconds to FILE as a JSON line: the test
// worker's own CPU and that of every process it started and waited for (the CLI, gates, sandboxes), from
// the file's first hook to its last. `npm run test:durations -- --cpu FILE` turns the log into
// test/cpu-seconds.json, which the sequencer (longest-first.ts) reads to keep waiting files apart.
// Set up for every file (vitest.config.ts, setupFiles); without the variable it does nothing.
import { appendFileSync, readFileSync } from "node:fs";
import { relative, resolve } from "node:path";
import { afterAll, beforeAll } from "vitest";

const log = process.env.LOOPGATE_TEST_CPU_LOG;
const root = resolve(import.meta.dirname, "..", "..");

/** utime + stime + cutime + cstime of this process, in seconds (/proc/self/stat, 100 ticks a second). */
function cpuSeconds(): number {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // Fields 14 to 17 of stat(5); the slice starts at field 3.
  return fields.slice(11, 15).reduce((sum, f) => sum + Number(f), 0) / 100;
}

if (log) {
  let start = 0;
  beforeAll(() => {
    start = cpuSeconds();
  });
  // biome-ignore lint/correctness/noEmptyPattern: vitest reads the first parameter's pattern for fixtures, and this hook uses none
  afterAll(({}, suite) => {
    const file = relative(root, suite.file.filepath);
    appendFileSync(log, `${JSON.stringify({ file, cpu: Math.round((cpuSeconds() - start) * 10) / 10 })}\n`);
  });
}
