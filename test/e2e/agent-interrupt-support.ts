// Interrupting a real agent (Claude Code, Codex) mid tool call: start loopgate in its own process group,
// wait until the agent's Bash call runs (its marker file), send SIGINT as a terminal's Ctrl-C would, and
// look for anything left behind in /proc.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { BIN, ROOT } from "./cli.js";

/** A loopgate process started in its own process group, with what it printed so far. */
export interface Started {
  child: ChildProcess;
  out: { stdout: string; stderr: string };
}

/** `node bin/loopgate.js ...args` detached (its own process group), stdout and stderr collected. */
export function startDetached(args: readonly string[], env: Record<string, string>, cwd = ROOT): Started {
  const full: NodeJS.ProcessEnv = { ...process.env, ...env };
  delete full.LOOPGATE_STORE;
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
    env: full,
  });
  const out = { stdout: "", stderr: "" };
  child.stdout?.setEncoding("utf8").on("data", (d: string) => {
    out.stdout += d;
  });
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    out.stderr += d;
  });
  return { child, out };
}

/** The run folders of a store (`STORE/runs/*`). */
export function runDirs(store: string): string[] {
  const runs = join(store, "runs");
  return existsSync(runs) ? readdirSync(runs).map((r) => join(runs, r)) : [];
}

/** Resolves with the run folder once `file` exists in its workspace (the agent's tool call runs). */
export async function untilMarker(store: string, file: string, s: Started, ms = 180_000): Promise<string> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline && s.child.exitCode === null) {
    const hit = runDirs(store).find((r) => existsSync(join(r, "workspace", file)));
    if (hit) return hit;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(
    `the agent's tool call never started\n--- stderr\n${s.out.stderr}\n--- stdout\n${s.out.stdout}`,
  );
}

/** The exit code once the process has closed. */
export function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((res) => {
    if (child.exitCode !== null) res(child.exitCode);
    else child.on("close", (code) => res(code));
  });
}

/**
 * Processes still alive that belong to the run: their command line names `needle` (the run's folder,
 * or a marker only the agent's command holds), or they run in the run's workspace.
 */
export function leftovers(needles: readonly string[], workspace: string): string[] {
  const found: string[] = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    if (Number(pid) === process.pid) continue;
    let cmd = "";
    let cwd = "";
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim();
    } catch {
      continue;
    }
    try {
      cwd = readlinkSync(`/proc/${pid}/cwd`);
    } catch {
      // gone, or not ours to read
    }
    if (cmd === "") continue;
    if (needles.some((n) => cmd.includes(n)) || cwd === workspace || cwd.startsWith(`${workspace}/`))
      found.push(`${pid}: ${cmd.slice(0, 200)} (cwd ${cwd})`);
  }
  return found;
}

/** Polls until no such process is left, or the time is up; returns what is left. */
export async function untilNoneLeft(
  needles: readonly string[],
  workspace: string,
  ms = 10_000,
): Promise<string[]> {
  const deadline = Date.now() + ms;
  let left = leftovers(needles, workspace);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 250));
    left = leftovers(needles, workspace);
  }
  return left;
}
