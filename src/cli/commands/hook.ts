import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, isAbsolute, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { shellWord } from "../../builders/claude/claude-settings.js";
import type { HookReply } from "../../builders/claude/hook-input.js";
import { InputError } from "../../core/errors.js";
import { loadTask } from "../../runner/load-task.js";
import { storeFrom } from "../context.js";
import type { CommandIO } from "../io.js";
import { blockFor, localPostTool, localStop } from "./hook-stop.js";
import { localTaskCompleted, refuse } from "./hook-task.js";

interface HookFlags {
  store?: string;
  project?: boolean;
  user?: boolean;
  "dry-run"?: boolean;
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
export function installSettings(taskFile: string, storeDir: string, bin: string): Record<string, unknown> {
  const cmd = (sub: string) =>
    [process.execPath, bin, "hook", sub, taskFile, "--store", storeDir].map(shellWord).join(" ");
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

const isLoopgateEntry = (e: unknown) =>
  [" hook stop ", " hook post-tool ", " hook task-completed "].some((w) => JSON.stringify(e).includes(w));

function install(io: CommandIO, task: string | undefined, flags: HookFlags): number {
  if (!task) throw new InputError("missing TASK", "loopgate hook install");
  if (flags.project && flags.user)
    throw new InputError("choose one of --project and --user", "loopgate hook install");
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
  const storeDir = where.kind === "postgres" ? where.url : resolve(where.dir);
  const bin = fileURLToPath(new URL("../../../bin/loopgate.js", import.meta.url));
  const hooks = installSettings(resolve(loaded.file), storeDir, bin);
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
  io.err(
    `loopgate: wrote the Stop, PostToolUse and TaskCompleted hooks for ${loaded.task.id} into ${file}\n` +
      "note: an agent can edit this file; for a gate it cannot remove, pass the same hooks with --settings FILE\n" +
      "from a read-only place, or put them in managed settings (loopgate hook install --dry-run prints them)\n",
  );
  return 0;
}
