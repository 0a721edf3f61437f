import { chmod, mkdir, mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { renderTemplate } from "../core/kernel/template.js";
import { DifferentialCase } from "../core/task/differential-spec.js";
import type { ProcessLimits } from "../core/task/limits.js";
import { runSandboxed, type SandboxMode } from "../sandbox/bubblewrap.js";
import { scrubbedEnv } from "../sandbox/environment.js";
import { removeTree } from "../workspace/remove-tree.js";

/** Where a case sees the tree under test and its input files inside the sandbox: the same for both trees. */
export const TREE_MOUNT = "/tree";
export const FILES_MOUNT = "/case";

/** Each output stream is kept whole up to this size; a larger one is reported, never compared in part. */
export const CAPTURE_BYTES = 1 << 20;

/** A case ready to run: its name and full argv template. */
export interface ResolvedCase {
  name: string;
  argv: readonly string[];
  stdin: string | undefined;
  files: Readonly<Record<string, string>>;
}

/** What one case did on one tree. */
export interface CaseRun {
  exitCode: number | null;
  signal: string | null;
  timedOut: boolean;
  spawnError: string | null;
  stdout: Buffer;
  stderr: Buffer;
  overflow: boolean;
  durationMs: number;
}

/** How cases and generators run: the sandbox mode, the per-run limit and the user's interrupt. */
export interface RunLimits {
  sandbox: SandboxMode;
  timeoutMs: number;
  signal: AbortSignal | undefined;
  /** The task's rlimits for each run (default DEFAULT_PROCESS_LIMITS). */
  process?: ProcessLimits | undefined;
}

const env = () => scrubbedEnv({ home: "/tmp", extra: { PYTHONDONTWRITEBYTECODE: "1" } });

/**
 * The host folders differential cases read their input files from, all under one temporary folder made
 * once per gate run: a case with files gets its own (read-only once written), every case without files
 * shares one empty folder. Both trees' runs of a case mount the same folder, so the paths they are given
 * are identical. `remove` deletes them all.
 */
export interface CaseFolders {
  of(c: ResolvedCase, index: number): Promise<string>;
  remove(): Promise<void>;
}

export async function caseFolders(): Promise<CaseFolders> {
  const root = await mkdtemp(join(tmpdir(), "loopgate-case-"));
  const made: string[] = [];
  let empty: Promise<string> | null = null;
  const folder = async (dir: string, files: Readonly<Record<string, string>>): Promise<string> => {
    await mkdir(dir);
    made.push(dir);
    for (const [name, content] of Object.entries(files)) {
      const p = join(dir, name);
      await mkdir(dirname(p), { recursive: true });
      await writeFile(p, content, { mode: 0o444 });
    }
    await chmod(dir, 0o555);
    return dir;
  };
  return {
    of(c, index) {
      if (Object.keys(c.files).length === 0) {
        empty ??= folder(join(root, "none"), {});
        return empty;
      }
      return folder(join(root, String(index)), c.files);
    },
    async remove() {
      await Promise.all(made.map((d) => chmod(d, 0o755).catch(() => {})));
      await removeTree(root);
    },
  };
}

/**
 * Runs one case on one tree in its own sandbox: the tree read-only at /tree (the working directory), the
 * case's files read-only at /case, tmpfs /tmp, no network, a scrubbed environment. Nothing else of the
 * host is mounted, so the other tree and the other run's output are out of reach. With the sandbox off
 * (--unsafe-no-sandbox) the host paths are used as they are.
 */
export async function runCase(
  tree: string,
  filesDir: string,
  c: ResolvedCase,
  limits: RunLimits,
): Promise<CaseRun> {
  const boxed = limits.sandbox === "bubblewrap";
  const params = { tree: boxed ? TREE_MOUNT : tree, files: boxed ? FILES_MOUNT : filesDir };
  const argv = c.argv.map((a) => renderTemplate(a, params));
  const r = await runSandboxed(
    {
      argv,
      cwd: params.tree,
      writable: [],
      readonly: [],
      ...(boxed
        ? {
            binds: [
              { source: tree, target: TREE_MOUNT },
              { source: filesDir, target: FILES_MOUNT },
            ],
          }
        : {}),
      env: env(),
      network: false,
      timeoutMs: limits.timeoutMs,
      ...(limits.process ? { limits: limits.process } : {}),
      maxOutputBytes: 2000,
      captureBytes: CAPTURE_BYTES,
      input: c.stdin ?? "",
      ...(limits.signal ? { signal: limits.signal } : {}),
    },
    limits.sandbox,
  );
  return {
    exitCode: r.exitCode,
    signal: r.signal,
    timedOut: r.timedOut,
    spawnError: r.spawnError,
    stdout: r.streams?.stdout ?? Buffer.alloc(0),
    stderr: r.streams?.stderr ?? Buffer.alloc(0),
    overflow: r.streams?.overflow ?? false,
    durationMs: r.durationMs,
  };
}

/** The cases a generator printed, or why there are none (always the task's fault, never the builder's). */
export type Generated = { cases: ResolvedCase[] } | { error: string };

/**
 * Runs the task's generator with `${seed}` and `${count}`: in its own sandbox, the task's folder read-only
 * (its working directory), no network. It prints one case per line as JSON (`{"name"?, "run"?, "args"?,
 * "stdin"?, "files"?}`); between 1 and `count` of them.
 */
export async function generateCases(
  generator: { run: readonly string[]; count: number },
  fallbackRun: readonly string[] | undefined,
  taskDir: string,
  seed: number,
  limits: RunLimits,
): Promise<Generated> {
  const argv = generator.run.map((a) =>
    renderTemplate(a, { seed: String(seed), count: String(generator.count) }),
  );
  const r = await runSandboxed(
    {
      argv,
      cwd: taskDir,
      writable: [],
      readonly: [taskDir],
      env: env(),
      network: false,
      timeoutMs: limits.timeoutMs,
      ...(limits.process ? { limits: limits.process } : {}),
      maxOutputBytes: 2000,
      captureBytes: 8 * CAPTURE_BYTES,
      ...(limits.signal ? { signal: limits.signal } : {}),
    },
    limits.sandbox,
  );
  const why = `generator ${argv.join(" ")} (seed ${seed})`;
  if (r.spawnError) return { error: `${why} could not start: ${r.spawnError}` };
  if (r.timedOut) return { error: `${why} timed out after ${limits.timeoutMs} ms` };
  if (r.exitCode !== 0)
    return { error: `${why} exited ${r.exitCode ?? r.signal}: ${r.output.trim().slice(-500)}` };
  if (r.streams?.overflow) return { error: `${why} printed more than ${8 * CAPTURE_BYTES} bytes` };
  const lines = (r.streams?.stdout.toString("utf8") ?? "").split("\n").filter((l) => l.trim() !== "");
  if (lines.length === 0) return { error: `${why} printed no cases` };
  if (lines.length > generator.count)
    return { error: `${why} printed ${lines.length} cases; count is ${generator.count}` };
  const cases: ResolvedCase[] = [];
  for (const [i, line] of lines.entries()) {
    let raw: unknown;
    try {
      raw = JSON.parse(line);
    } catch (e) {
      return { error: `${why}: line ${i + 1} is not JSON: ${(e as Error).message.slice(0, 120)}` };
    }
    const parsed = DifferentialCase.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return { error: `${why}: line ${i + 1}: ${issue?.path.join(".") || "(case)"}: ${issue?.message}` };
    }
    const c = parsed.data;
    const run = c.run ?? fallbackRun;
    if (!run) return { error: `${why}: line ${i + 1} has no run and the gate declares none` };
    cases.push(resolveCase(c, run, `generated-${i + 1}`));
  }
  return { cases };
}

/** A declared or generated case with its argv and name resolved. */
export function resolveCase(c: DifferentialCase, run: readonly string[], name: string): ResolvedCase {
  return { name: c.name ?? name, argv: [...(c.run ?? run), ...c.args], stdin: c.stdin, files: c.files ?? {} };
}
