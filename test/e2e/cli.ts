// Runs the loopgate CLI as a user does (`node bin/loopgate.js ...`) and captures what it prints.
import { spawn } from "node:child_process";
import {
  chmodSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";
import { removeTreeSync } from "../../src/workspace/remove-tree.js";

/** The package root (where package.json and bin/ live). */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const BIN = join(ROOT, "bin", "loopgate.js");
export const EXAMPLES = ["js-slugify", "py-durations", "sh-csvcol"] as const;
export type ExampleName = (typeof EXAMPLES)[number];

/** What one CLI invocation produced. */
export interface CliResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Runs `node bin/loopgate.js ...args` with stdin closed and stdout/stderr as pipes (not a terminal). */
export function loopgate(
  args: readonly string[],
  options: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<CliResult> {
  const env: NodeJS.ProcessEnv = { ...process.env, ...options.env };
  delete env.LOOPGATE_STORE; // a caller's store must never leak into (or out of) a test
  if (options.env?.LOOPGATE_STORE) env.LOOPGATE_STORE = options.env.LOOPGATE_STORE;
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd ?? defaultCwd(args, options.env?.LOOPGATE_STORE),
      env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => {
      stdout += d;
    });
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 110_000);
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr });
    });
  });
}

const POSTGRES_URL = /^postgres(ql)?:\/\//i;
let postgresCwd: string | null = null;

/**
 * Where a command starts when its test names no folder: the repository root, except with a postgres://
 * store. Such a store keeps its run folders in ./.loopgate under the folder a command starts in; those
 * commands share one temporary folder per test process (so a run and its resume still find the same run
 * folders), never the repository, whose own .loopgate/ would fill with test runs.
 */
function defaultCwd(args: readonly string[], envStore: string | undefined): string {
  const at = args.indexOf("--store");
  const flag = at >= 0 ? args[at + 1] : args.find((a) => a.startsWith("--store="))?.slice("--store=".length);
  const store = flag ?? envStore;
  return store && POSTGRES_URL.test(store) ? postgresHome() : ROOT;
}

/**
 * The folder commands on a postgres:// store start in when their test names none: one per test process,
 * removed when it exits. A test that spawns the CLI itself (a worker) starts it here too, as on the
 * machine the helper's commands run on.
 */
export function postgresHome(): string {
  if (postgresCwd === null) {
    const dir = mkdtempSync(join(tmpdir(), "loopgate-e2e-pg-cwd-"));
    process.once("exit", () => rmSync(dir, { recursive: true, force: true }));
    postgresCwd = dir;
  }
  return postgresCwd;
}

/** Parses the whole of stdout as one JSON value; on failure the error shows what was printed. */
export function parseStdout<T = unknown>(r: CliResult): T {
  try {
    return JSON.parse(r.stdout) as T;
  } catch (e) {
    throw new Error(
      `stdout is not one JSON value (${String(e)}); exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`,
    );
  }
}

/** A short description of a result, for assertion messages. */
export const show = (r: CliResult) => `exit ${r.code}\n--- stdout\n${r.stdout}\n--- stderr\n${r.stderr}`;

const temps: string[] = [];

/**
 * Makes `dir` a folder where `npx loopgate` resolves to this package, as after `npm install loopgate`.
 * (In the repository itself npx would first install the package into its own cache, building it: tens of
 * seconds a test must not depend on.)
 */
export function withLocalInstall(dir: string): void {
  mkdirSync(join(dir, "node_modules", ".bin"), { recursive: true });
  symlinkSync(ROOT, join(dir, "node_modules", "loopgate"));
  symlinkSync(join("..", "loopgate", "bin", "loopgate.js"), join(dir, "node_modules", ".bin", "loopgate"));
}

/** A fresh temporary folder, removed by `removeTemps()`. */
export function tempDir(prefix = "loopgate-e2e-"): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  temps.push(d);
  return d;
}

/** Removes every folder `tempDir()` made in this test file. */
/** Removes the test's folders; a run killed mid-way keeps its overlay mounted, so they are unmounted first. */
export function removeTemps(): void {
  for (const d of temps.splice(0)) removeTreeSync(d);
}

export const exampleDir = (name: ExampleName) => join(ROOT, "examples", name);
export const exampleTask = (name: ExampleName) => join(exampleDir(name), "task.yaml");

/**
 * A private copy of an example (its folder, without any lock beside its task file unless `keepLock`),
 * for tests that run `task check`: it writes the lock beside the task file, never into the repository.
 */
export function copyExample(name: ExampleName, options: { keepLock?: boolean } = {}): string {
  const dir = join(tempDir(`loopgate-e2e-${name}-`), name);
  cpSync(exampleDir(name), dir, { recursive: true, verbatimSymlinks: true });
  if (!options.keepLock) rmSync(join(dir, "task.lock.json"), { force: true });
  return join(dir, "task.yaml");
}

/** The gate ids an example declares, read from its task.yaml (not from loopgate). */
export function gateIdsOf(taskFile: string): string[] {
  const doc = parseYaml(readFileSync(taskFile, "utf8")) as { gates: { id: string }[] };
  return doc.gates.map((g) => g.id);
}

/** Writes a task folder (task.yaml, a one-file repo/, optionally an executable oracle) and returns the task file. */
export function writeTask(yaml: string, options: { oracle?: string } = {}): string {
  const dir = tempDir("loopgate-e2e-task-");
  mkdirSync(join(dir, "repo"));
  writeFileSync(join(dir, "repo", "greeting.txt"), "hello\n");
  if (options.oracle !== undefined) {
    writeFileSync(join(dir, "solution.sh"), options.oracle);
    chmodSync(join(dir, "solution.sh"), 0o755);
  }
  const file = join(dir, "task.yaml");
  writeFileSync(file, yaml);
  return file;
}

/**
 * An envelope's gate entry, or a `gate_run_finished` event's data, less what is fresh in every run:
 * the names of loopgate's canary tests (random words) and the exit-code note that quotes them. For
 * comparing two runs of the same task.
 */
export function withoutCanaryNames(g: Record<string, unknown>): Record<string, unknown> {
  const { exit_code_note: _n, ...rest } = g;
  const tamper = rest.tamper as { canary?: Record<string, unknown> } | undefined;
  if (!tamper?.canary) return rest;
  const { tests: _t, ...canary } = tamper.canary;
  return { ...rest, tamper: { ...tamper, canary } };
}

/** The envelope (docs/reference/envelope.md), as far as the tests read it. */
export interface Envelope {
  run_id: string;
  task_id: string;
  status: "SUCCESS" | "ESCALATED" | "TOOL_FAILURE";
  reason: string;
  attempts: number;
  gates: {
    id: string;
    attempt: number;
    passed: boolean;
    exit_code: number | null;
    timed_out: boolean;
    duration_ms: number;
    log_excerpt: string;
  }[];
  findings: { attempt: number; code: string; severity: string; path?: string | null; detail?: string }[];
  claims: { attempt: number; text: string; hedged: boolean }[];
  audit: {
    self_correction_count: number;
    latency_ms: number;
    hedge_warning: boolean;
    cost: unknown;
    tokens: unknown;
    event_count: number;
  };
}
