import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { shellWord } from "../../../builders/claude/claude-settings.js";
import type { HookReply } from "../../../builders/stop-gate/hook-input.js";
import { InputError } from "../../../core/kernel/errors.js";
import { loadTask } from "../../../runner/task-source/load-task.js";
import { storeFrom } from "../../output/context.js";
import { cliName, packageRoot } from "../../output/invocation.js";
import type { CommandIO } from "../../output/io.js";
import { blockFor, localPostTool, localStop } from "./hook-stop.js";
import { localTaskCompleted, refuse } from "./hook-task.js";

interface HookFlags {
  store?: string;
  project?: boolean;
  user?: boolean;
  "dry-run"?: boolean;
  managed?: boolean;
  json?: boolean;
}

/** A Stop check that takes longer than this blocks (Claude Code's own timeout for the hook is 600 s). */
const STOP_DEADLINE_MS = 570_000;

function readStdin(): Promise<string> {
  return new Promise((resolvePromise, reject) => {
    const chunks: Buffer[] = [];
    process.stdin.on("data", (c: Buffer) => chunks.push(c));
    process.stdin.on("end", () => resolvePromise(Buffer.concat(chunks).toString("utf8")));
    process.stdin.on("error", reject);
  });
}

function emit(io: CommandIO, r: HookReply): number {
  if (r.stdout) io.out(r.stdout);
  if (r.stderr) io.err(r.stderr);
  return r.exit_code;
}

/** `loopgate hook stop|post-tool|task-completed TASK` (hook commands of a user's own session) and `hook install TASK`. */
export async function hookCommand(io: CommandIO, args: readonly string[], flags: HookFlags): Promise<number> {
  const [sub, task] = args;
  if (sub === "install") return install(io, task, flags);
  if (sub !== "stop" && sub !== "post-tool" && sub !== "task-completed")
    throw new InputError("expected stop, post-tool, task-completed or install", "loopgate hook");
  if (!task) throw new InputError(`missing TASK; see loopgate hook --help`, `loopgate hook ${sub}`);
  const stdin = await readStdin();
  if (sub === "task-completed")
    return emit(
      io,
      await localTaskCompleted(stdin, task, flags.store).catch((e: unknown) =>
        refuse(e instanceof Error ? e.message : String(e)),
      ),
    );
  if (sub === "post-tool") {
    try {
      return emit(io, await localPostTool(stdin, task, flags.store));
    } catch (e) {
      return emit(io, {
        exit_code: 1,
        stdout: "",
        stderr: `loopgate could not record this tool call: ${String(e)}\n`,
      });
    }
  }
  // Errors, a store that cannot be opened, a check past its deadline: each blocks, with the reason.
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<HookReply>((r) => {
    timer = setTimeout(
      () => r(blockFor(`the check took longer than ${STOP_DEADLINE_MS / 1000} s`)),
      STOP_DEADLINE_MS,
    );
  });
  const checked = localStop(stdin, task, flags.store).catch((e: unknown) =>
    blockFor(e instanceof Error ? e.message : String(e)),
  );
  const reply = await Promise.race([checked, deadline]);
  clearTimeout(timer);
  return emit(io, reply);
}

/** The hook settings for a user's own sessions: Stop and PostToolUse(Failure) run loopgate on TASK. */
export function installSettings(taskFile: string, localDir: string, bin: string): Record<string, unknown> {
  const cmd = (sub: string) =>
    [process.execPath, bin, "hook", sub, taskFile, "--store", localDir].map(shellWord).join(" ");
  const entry = (sub: string, timeout: number, matcher: boolean) => ({
    ...(matcher ? { matcher: "*" } : {}),
    hooks: [{ type: "command", command: cmd(sub), timeout }],
  });
  return {
    Stop: [entry("stop", 600, false)],
    PostToolUse: [entry("post-tool", 30, true)],
    PostToolUseFailure: [entry("post-tool", 30, true)],
    TaskCompleted: [entry("task-completed", 120, false)],
  };
}

/** Where Claude Code on Linux reads managed settings, which no user, project or local file overrides. */
export const MANAGED_SETTINGS_LINUX = "/etc/claude-code/managed-settings.json";

/**
 * What `hook install` says about the hooks it wrote: that an agent able to write its own settings file can
 * switch them off (Claude Code reloads a changed file: no Stop hook runs, claude exits 0, nothing checks
 * the work), how to lock them, and that `loopgate runs` shows the sessions that ended unverified.
 */
export function lockAdvice(
  file: string,
  me: string,
  taskFile: string,
): { warning: string; lock: string[]; unverified: string } {
  return {
    warning: `an agent that can write ${file} can switch these hooks off: Claude Code reloads the changed file and then runs no Stop hook, so the session ends unverified and claude exits 0`,
    lock: [
      `managed settings, the one lock an agent running as you cannot undo (no user, project or local settings file overrides or disables them): put the hooks (${me} hook install ${shellWord(taskFile)} --managed prints them) in ${MANAGED_SETTINGS_LINUX} (owned by root; macOS: /Library/Application Support/ClaudeCode/managed-settings.json), instead of this file; add "allowManagedHooksOnly": true there to ignore hooks from every other file`,
      `or let loopgate start Claude Code in its sandbox, with the hooks in a file it cannot write: ${me} claude ${shellWord(taskFile)}`,
      `claude --settings FILE from a read-only place, or chmod a-w ${file}, only slow it down: it can still write "disableAllHooks": true into a settings file it owns, or change the mode back`,
    ],
    unverified: `${me} runs lists every session whose end loopgate never verified as unverified, with the ${me} verify that checks it`,
  };
}

const isLoopgateEntry = (e: unknown) =>
  [" hook stop ", " hook post-tool ", " hook task-completed "].some((w) => JSON.stringify(e).includes(w));

function install(io: CommandIO, task: string | undefined, flags: HookFlags): number {
  if (!task) throw new InputError("missing TASK", "loopgate hook install");
  if (flags.project && flags.user)
    throw new InputError("choose one of --project and --user", "loopgate hook install");
  if (flags.managed && (flags.project || flags.user || flags["dry-run"]))
    throw new InputError(
      "--managed prints the hooks for the managed settings file and writes nothing; leave out --project, --user and --dry-run",
      "loopgate hook install",
    );
  const loaded = loadTask(task);
  const where = storeFrom(flags.store);
  // The hooks name the store in the settings file: a Postgres URL as given, never with its password.
  if (where.kind === "postgres" && new URL(where.url).password)
    throw new InputError(
      `${where.label} carries a password, which the hooks would write into Claude Code's settings file; give the URL without it and keep the password in ~/.pgpass or $PGPASSWORD`,
      "loopgate hook install --store",
    );
  // The hooks verify the project's folder: a folder store inside it would be copied into its own runs.
  const project = flags.user ? null : process.cwd();
  const rel = project === null ? null : relative(project, where.dir);
  if (where.kind === "folder" && rel !== null && (rel === "" || (!rel.startsWith("..") && !isAbsolute(rel))))
    throw new InputError(
      `the store ${where.dir} lies inside this project, whose sessions the hooks verify; give --store a folder outside it`,
      "loopgate hook install --store",
    );
  const localDir = where.kind === "postgres" ? where.url : resolve(where.dir);
  // The package's launcher, found by walking up to its package.json (the CLI may run from dist/ or from
  // the one-file bundle, whose modules share one import.meta.url).
  const bin = join(packageRoot(), "bin", "loopgate.js");
  const hooks = installSettings(resolve(loaded.file), localDir, bin);
  if (flags.managed) {
    // Printed, never written: the managed file is root's, and it replaces the project's hooks (both would run).
    io.out(`${JSON.stringify({ hooks }, null, 2)}\n`);
    io.err(
      `loopgate: the hooks for ${loaded.task.id} as managed settings: merge them into ${MANAGED_SETTINGS_LINUX} (as root) instead of installing them in a project; no user, project or local settings file can then override or disable them\n`,
    );
    return 0;
  }
  const file = flags.user
    ? join(homedir(), ".claude", "settings.json")
    : join(process.cwd(), ".claude", "settings.json");
  let settings: Record<string, unknown> = {};
  if (existsSync(file)) {
    try {
      settings = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    } catch (e) {
      throw new InputError(`is not JSON (${(e as Error).message}); fix or remove it first`, file);
    }
  }
  const existing = (settings.hooks ?? {}) as Record<string, unknown[]>;
  const merged: Record<string, unknown[]> = { ...existing };
  for (const [event, entries] of Object.entries(hooks))
    merged[event] = [
      ...(existing[event] ?? []).filter((e) => !isLoopgateEntry(e)),
      ...(entries as unknown[]),
    ];
  const next = { ...settings, hooks: merged };
  const text = `${JSON.stringify(next, null, 2)}\n`;
  if (flags["dry-run"]) {
    io.out(text);
    return 0;
  }
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, text);
  const advice = lockAdvice(file, cliName(), resolve(loaded.file));
  if (flags.json)
    io.out(
      `${JSON.stringify({ settings_file: file, task_id: loaded.task.id, task_file: resolve(loaded.file), store: localDir, hooks: Object.keys(hooks), ...advice, managed_settings_file: MANAGED_SETTINGS_LINUX }, null, 2)}\n`,
    );
  else
    io.err(
      `loopgate: wrote the Stop, PostToolUse and TaskCompleted hooks for ${loaded.task.id} into ${file}\n` +
        `warning: ${advice.warning}\nto lock them:\n${advice.lock.map((l) => `  - ${l}\n`).join("")}${advice.unverified}\n`,
    );
  return 0;
}
