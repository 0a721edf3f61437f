import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { LongestFirst } from "./test/support/longest-first.js";

// Most int and e2e tests wait on child processes (bubblewrap, git, runners, PostgreSQL), not on the CPU:
// vitest's default of one worker per core minus one (a single worker on 2 cores) leaves the machine idle.
// One per core plus one (on 2 cores, 3): a fourth measured no faster, the whole suite being bound by the CPU.
// LOOPGATE_TEST_WORKERS overrides; every test bounds its waits generously enough for this load.
const workers =
  Number(process.env.LOOPGATE_TEST_WORKERS) || Math.max(2, Math.min(4, availableParallelism() + 1));

// NODE_EXTRA_CA_CERTS (machines often point it at the whole system bundle) makes every Node process parse
// each certificate at start: about 40 ms of CPU before any code runs, and the suite starts over 3,000 Node
// processes (the CLI, gates, workers). No test talks TLS: the model servers and PostgreSQL are plain
// connections on 127.0.0.1. The workers, and everything they start, go without it.
delete process.env.NODE_EXTRA_CA_CERTS;

LongestFirst.workers = workers;

// Each file's CPU, logged only with LOOPGATE_TEST_CPU_LOG (test/support/file-cpu.ts).
const CPU_PER_FILE = "./test/support/file-cpu.ts";

const COPY_PATH_FILES = [
  "test/runner/run/run-task.int.test.ts",
  "test/runner/mount-rules.int.test.ts",
  "test/runner/canary.int.test.ts",
  "test/runner/feedback-leak.int.test.ts",
  "test/runner/limits.int.test.ts",
  "test/runner/hostile-strings.int.test.ts",
  "test/runner/raw-names.int.test.ts",
  "test/runner/host-safety.int.test.ts",
  "test/e2e/inert-output.e2e.test.ts",
  "test/bench/forgery/forgery-subset.int.test.ts",
  "test/e2e/kill-campaign.e2e.test.ts",
];

export default defineConfig({
  test: {
    maxWorkers: workers,
    // Longest file first across all three projects (see test/support/longest-first.ts).
    sequence: { sequencer: LongestFirst },
    projects: [
      // Unit tests take milliseconds to a second or two; a few walk every command × flag. The bound is one
      // a loaded machine (load average 14 on 2 cores was seen) cannot reach, not vitest's 5 s default.
      // No project isolates its files (isolate: false): a worker keeps the modules it loaded for the next file
      // instead of importing them again. That was three quarters of the unit project's CPU, and 5% of the
      // whole suite's (the suite is bound by the CPU of two cores). Every file therefore leaves the process as
      // it found it: environment variables it sets are restored, and it mocks no module.
      {
        test: {
          name: "unit",
          include: ["test/**/*.unit.test.ts"],
          testTimeout: 30_000,
          isolate: false,
          setupFiles: [CPU_PER_FILE],
        },
      },
      {
        test: {
          name: "int",
          include: ["test/**/*.int.test.ts"],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          isolate: false,
          setupFiles: [CPU_PER_FILE],
        },
      },
      {
        test: {
          name: "e2e",
          include: ["test/**/*.e2e.test.ts"],
          testTimeout: 120_000,
          hookTimeout: 120_000,
          isolate: false,
          setupFiles: [CPU_PER_FILE],
        },
      },
      // As root, runs work on overlays; these files run a second time on copies (LOOPGATE_WORKSPACE=copy),
      // the path runs take where overlays cannot be mounted: held-out files, limits, odd names, the
      // forgery arms and the kill campaign must hold on both.
      {
        test: {
          name: "copy",
          include: COPY_PATH_FILES,
          testTimeout: 120_000,
          hookTimeout: 120_000,
          isolate: false,
          setupFiles: [CPU_PER_FILE, "./test/support/copy-workspace.ts"],
        },
      },
    ],
  },
});
