import { chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FORWARDER_SCRIPT } from "./hook-forwarder.js";

/** The hook events loopgate injects, and the one that decides whether Claude may stop. */
export const HOOK_EVENTS = ["Stop", "PostToolUse", "PostToolUseFailure", "TaskCompleted"] as const;

/** A word for /bin/sh, single-quoted. */
export const shellWord = (w: string) => (/^[\w./:@=+-]+$/.test(w) ? w : `'${w.replace(/'/g, "'\\''")}'`);

/**
 * The settings Claude Code gets through `--settings FILE`: every hook runs `command` (the same for
 * each event; it reads hook_event_name from stdin). Stop's timeout is Claude's own limit on the hook; the
 * command's deadline is shorter, so it is loopgate that answers (and blocks) when time runs out.
 */
export function hookSettings(command: string, timeoutSeconds: number): Record<string, unknown> {
  const entry = (matcher: boolean) => ({
    ...(matcher ? { matcher: "*" } : {}),
    hooks: [{ type: "command", command, timeout: timeoutSeconds }],
  });
  return {
    hooks: {
      Stop: [entry(false)],
      PostToolUse: [entry(true)],
      PostToolUseFailure: [entry(true)],
      TaskCompleted: [entry(false)],
    },
  };
}

/** What `writeHookFiles` made: the settings file and its read-only folder (outside the workspace). */
export interface HookFiles {
  dir: string;
  settingsFile: string;
  forwarder: string;
}

/**
 * Makes `dir` anew, empty and 0700 (a folder a former process left read-only is cleared first): the hook
 * server's socket is made in it, then `writeHookFiles` writes the rest and closes it.
 */
export function freshHookDir(dir: string): string {
  if (existsSync(dir)) {
    chmodSync(dir, 0o700);
    rmSync(dir, { recursive: true, force: true });
  }
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** The hook command line: node, the forwarder, the hook server's socket, the deadline. No credential. */
export function hookCommand(o: { node: string; forwarder: string; socket: string; deadlineSeconds: number }) {
  return [o.node, o.forwarder, o.socket, String(o.deadlineSeconds)].map(shellWord).join(" ");
}

/**
 * Writes the forwarder and the settings into `dir` (made by `freshHookDir`, holding the hook server's
 * socket), a folder loopgate owns outside the run workspace and mounts read-only into the sandbox; files
 * 0444 and the folder 0555, so the agent cannot change them even where it could write (and the mount is
 * read-only besides). The run folder around it is 0700: other users cannot reach the socket through it.
 */
export function writeHookFiles(
  dir: string,
  o: { node: string; socket: string; deadlineSeconds: number },
): HookFiles {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const forwarder = join(dir, "loopgate-hook.mjs");
  const settingsFile = join(dir, "settings.json");
  writeFileSync(forwarder, FORWARDER_SCRIPT, { mode: 0o444 });
  const command = hookCommand({ ...o, forwarder });
  const settings = hookSettings(command, o.deadlineSeconds + 30);
  writeFileSync(settingsFile, `${JSON.stringify(settings, null, 2)}\n`, { mode: 0o444 });
  chmodSync(dir, 0o555);
  return { dir, settingsFile, forwarder };
}

const hasFlag = (args: readonly string[], ...names: string[]) =>
  args.some((a) => names.some((n) => a === n || a.startsWith(`${n}=`)));

/** `claude`'s arguments for one session (or its `--resume`), with loopgate's settings and the user's own last. */
export function claudeArgs(o: {
  prompt: string;
  settingsFile: string;
  resume: string | null;
  user: readonly string[];
}): string[] {
  return [
    "-p",
    o.prompt,
    "--output-format",
    "stream-json",
    "--verbose",
    "--settings",
    o.settingsFile,
    // Project and local settings live in the workspace the agent writes: never read. The user source is
    // the private HOME's settings file, which is loopgate's and read-only.
    "--setting-sources",
    "user",
    ...(o.resume ? ["--resume", o.resume] : []),
    ...(hasFlag(o.user, "--allowedTools", "--allowed-tools", "--permission-mode")
      ? []
      : ["--allowedTools", "Bash,Edit,Write,Read,Glob,Grep"]),
    ...o.user,
  ];
}
