import { dirname } from "node:path";
import { runSandboxed } from "../sandbox/bubblewrap.js";
import { resolveProgram, scrubbedEnv } from "../sandbox/environment.js";
import type { Builder, BuilderContext, BuilderResult } from "./builder.js";
import { splitCommandLine, substituteBuilderArgs } from "./command-line.js";

const SYSTEM_PREFIXES = ["/usr/", "/bin/", "/sbin/", "/lib/", "/lib32/", "/lib64/", "/libx32/", "/etc/"];

/**
 * Runs argv as the builder, inside the sandbox: the run workspace read-write, the program itself
 * read-only when it lives outside the system directories, and nothing else of the host.
 */
export function runBuilderArgv(argv: readonly string[], ctx: BuilderContext): Promise<BuilderResult> {
  const program = argv[0] ?? "";
  const resolved =
    resolveProgram(program, ctx.workspace) ?? resolveProgram(program, ctx.workspace, process.env.PATH ?? "");
  if (!resolved)
    return Promise.resolve({
      exitCode: null,
      signal: null,
      timedOut: false,
      durationMs: 0,
      output: "",
      infrastructure: `builder command not found: ${program} (looked in the workspace and on PATH)`,
    });
  const inWorkspace = resolved.startsWith(`${ctx.workspace}/`);
  const system = SYSTEM_PREFIXES.some((p) => resolved.startsWith(p));
  const readonly = [...ctx.mounts, dirname(ctx.promptFile)];
  if (!inWorkspace && !system) readonly.push(resolved);
  const env = scrubbedEnv({
    home: "/tmp",
    allow: ctx.allowEnv,
    extra: {
      LOOPGATE_RUN_ID: ctx.runId,
      LOOPGATE_ATTEMPT: String(ctx.attempt),
      LOOPGATE_PROMPT_FILE: ctx.promptFile,
    },
  });
  return runSandboxed(
    {
      argv: [resolved, ...argv.slice(1)],
      cwd: ctx.workspace,
      writable: [ctx.workspace],
      readonly,
      env,
      network: ctx.network,
      timeoutMs: ctx.timeoutMs,
      maxOutputBytes: 16_000,
      ...(ctx.onOutput ? { onOutput: ctx.onOutput } : {}),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    },
    ctx.sandbox,
  ).then((r) => ({
    exitCode: r.exitCode,
    signal: r.signal,
    timedOut: r.timedOut,
    durationMs: r.durationMs,
    output: r.output,
    infrastructure: r.spawnError ? `builder could not start: ${r.spawnError}` : null,
  }));
}

/** An external agent command (`claude -p {prompt}`), re-run on every attempt with the required fix. */
export function commandBuilder(commandLine: string): Builder {
  const words = splitCommandLine(commandLine);
  return {
    descriptor: { kind: "command", command: commandLine },
    run(ctx) {
      const argv = substituteBuilderArgs(words, {
        prompt: ctx.prompt,
        prompt_file: ctx.promptFile,
        required_fix: ctx.requiredFix ?? "",
        workspace: ctx.workspace,
      });
      return runBuilderArgv(argv, ctx);
    },
  };
}

/** The task's reference solution, run as the builder in the same sandbox. */
export function oracleBuilder(oraclePath: string): Builder {
  return {
    descriptor: { kind: "oracle", command: oraclePath },
    run: (ctx) => runBuilderArgv([oraclePath], ctx),
  };
}

/** A builder that changes nothing: the control for "do the gates discriminate?". */
export function noopBuilder(): Builder {
  return {
    descriptor: { kind: "noop" },
    run: async () => ({
      exitCode: 0,
      signal: null,
      timedOut: false,
      durationMs: 0,
      output: "",
      infrastructure: null,
    }),
  };
}
