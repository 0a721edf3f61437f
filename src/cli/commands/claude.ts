import { existsSync, realpathSync } from "node:fs";
import { ClaudeBuilder } from "../../builders/claude/claude-builder.js";
import { stopDeadlineSeconds } from "../../builders/stop-gate/stop-deadline.js";
import { InputError } from "../../core/kernel/errors.js";
import { packagePath } from "../../core/kernel/package-root.js";
import type { RunFlags } from "../../runner/host/run-flags.js";
import { loadTask } from "../../runner/task-source/load-task.js";
import { resolveProgram } from "../../sandbox/environment.js";
import { storeFrom } from "../output/context.js";
import { exitCodeOf } from "../output/exit-codes.js";
import { hintCommand, hintsFor } from "../output/hints.js";
import type { CommandIO } from "../output/io.js";
import { CLAUDE_NOT_RESUMABLE } from "../output/run-owner.js";
import { shellWord } from "../output/store-location.js";
import { verdictText } from "../output/verdict-lines.js";
import { executeRun } from "./execute-run.js";

/** Claude Code ends a turn itself after this many consecutive Stop-hook blocks (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP). */
export const CLAUDE_BLOCK_CAP = 8;

/** The provider variables that reach Claude Code by name when they are set (values redacted from the log). */
export const CLAUDE_PROVIDER_ENV = [
  "ANTHROPIC_API_KEY",
  "ANTHROPIC_AUTH_TOKEN",
  "ANTHROPIC_BASE_URL",
  "ANTHROPIC_MODEL",
  "ANTHROPIC_SMALL_FAST_MODEL",
];

/**
 * The claude binary: $LOOPGATE_CLAUDE_BIN, else `claude` on PATH, else the one installed beside loopgate.
 * A binary that is not there is returned as named: the builder's preflight then ends the run as a
 * TOOL_FAILURE whose reason names it and how to install it (a builder that cannot start, docs/explanation/sandbox.md).
 */
export function findClaude(): string {
  const given = process.env.LOOPGATE_CLAUDE_BIN;
  if (given) return existsSync(given) ? realpathSync(given) : given;
  const onPath = resolveProgram("claude", process.cwd(), process.env.PATH ?? "");
  if (onPath) return realpathSync(onPath);
  const beside = packagePath("node_modules", ".bin", "claude");
  return existsSync(beside) ? realpathSync(beside) : beside;
}

/**
 * `loopgate claude TASK [-- CLAUDE ARGS]`: a run of TASK whose builder is the real Claude Code in
 * loopgate's sandbox, gated through its own Stop hook (see builders/claude/claude-builder.ts).
 */
export async function claudeCommand(
  io: CommandIO,
  args: readonly string[],
  flags: RunFlags,
): Promise<number> {
  const [taskPath, ...claudeArgs] = args;
  if (!taskPath) throw new InputError("missing TASK; see loopgate claude --help", "loopgate claude");
  const loaded = loadTask(taskPath);
  const program = findClaude();
  const wanted =
    flags["max-attempts"] !== undefined ? Number(flags["max-attempts"]) : loaded.task.budget.attempts;
  // Every failed attempt but the last is one Stop block: loopgate's cap must end the loop before Claude's.
  const maxAttempts = Math.min(wanted, CLAUDE_BLOCK_CAP);
  if (maxAttempts < wanted)
    io.err(
      `loopgate: note: attempts capped at ${maxAttempts}: Claude Code stops by itself after ${CLAUDE_BLOCK_CAP} consecutive Stop-hook blocks, and loopgate's cap must come first\n`,
    );
  // The goal may block Stops too: together with the attempts' blocks they stay below Claude's own cap.
  const builder = new ClaudeBuilder({
    program,
    extraArgs: claudeArgs,
    stopDeadlineSeconds: stopDeadlineSeconds(loaded.task.gates),
    goal: loaded.task.goal?.all ?? [],
    goalBlocks: CLAUDE_BLOCK_CAP - maxAttempts,
  });
  const allow = [
    ...new Set([...(flags["builder-env"] ?? []), ...CLAUDE_PROVIDER_ENV.filter((n) => process.env[n])]),
  ];
  try {
    const env = await executeRun(
      io,
      loaded,
      builder,
      { ...flags, "builder-env": allow, network: true },
      { maxAttempts },
    );
    if (flags.json) io.out(`${JSON.stringify(env, null, 2)}\n`);
    else {
      const where = storeFrom(flags.store);
      // Interrupted: the Claude Code session is gone, so the run is started again rather than resumed.
      const again = `${CLAUDE_NOT_RESUMABLE}; run it again: ${hintCommand(hintsFor(where), `claude ${shellWord(taskPath)}`)}`;
      io.out(verdictText(env, where, again));
    }
    return exitCodeOf(env.status);
  } finally {
    await builder.dispose();
  }
}
