// Runs `node bin/loopgate.js …` in its own process group, so a kill takes the whole tree down at once as
// a crash of the machine would (builder, gates and all), and waits for its end.
import { spawn } from "node:child_process";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const BIN = join(ROOT, "bin", "loopgate.js");

export interface Finished {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

export interface Proc {
  /** Resolves when the process and its pipes are closed. */
  done: Promise<Finished>;
  /** SIGKILLs the whole process group; false when it had already exited. */
  kill(): boolean;
  /** Resolves when stderr first contains `text` (never, if it never does). */
  saw(text: string): Promise<void>;
  exited(): boolean;
}

/** Process groups still alive, so an interrupted campaign can take them down with it. */
const live = new Set<number>();

/** SIGKILLs every process group this module started that is still alive. */
export function killAll(): void {
  for (const pid of live)
    try {
      process.kill(-pid, "SIGKILL");
    } catch {}
  live.clear();
}

export function loopgate(
  args: readonly string[],
  env: Record<string, string> = {},
  timeoutMs = 120_000,
): Proc {
  const full: NodeJS.ProcessEnv = { ...process.env, ...env };
  delete full.LOOPGATE_STORE;
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: full,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  if (child.pid !== undefined) live.add(child.pid);
  let stdout = "";
  let stderr = "";
  let closed = false;
  const waiters: { text: string; resolve: () => void }[] = [];
  child.stdout.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
  });
  child.stderr.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
    for (const w of waiters.splice(0))
      if (stderr.includes(w.text)) w.resolve();
      else waiters.push(w);
  });
  const killGroup = () => {
    if (closed || child.pid === undefined) return false;
    try {
      process.kill(-child.pid, "SIGKILL");
      return true;
    } catch {
      return false;
    }
  };
  const timer = setTimeout(killGroup, timeoutMs);
  const done = new Promise<Finished>((resolveDone, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      closed = true;
      clearTimeout(timer);
      if (child.pid !== undefined) live.delete(child.pid);
      // Whatever the dead process left behind in its group (a builder, a gate) goes with it.
      if (child.pid !== undefined)
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {}
      resolveDone({ code, signal, stdout, stderr });
    });
  });
  return {
    done,
    kill: killGroup,
    exited: () => closed,
    saw: (text) =>
      new Promise<void>((r) => {
        if (stderr.includes(text)) r();
        else waiters.push({ text, resolve: r });
      }),
  };
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
