import { z } from "zod";
import { InfrastructureError } from "../../core/kernel/errors.js";
import { runSandboxed } from "../../sandbox/bubblewrap.js";
import { resolveProgram, scrubbedEnv } from "../../sandbox/environment.js";
import type { AgentTool, ToolContext, ToolResult } from "./tool.js";
import { realWorkspace } from "./tool-path.js";
import { toolError, toolOk } from "./tool-result.js";

/** Characters of combined output the model sees; past this, the head and tail are kept and the cut said. */
export const BASH_OUTPUT_CHARS = 16_000;

const schema = z.strictObject({
  command: z
    .string()
    .min(1)
    .max(20_000)
    .describe("The shell command line, run with bash -c in the workspace."),
  timeout_seconds: z
    .number()
    .int()
    .min(1)
    .max(600)
    .optional()
    .describe("Kill the command (and everything it started) after this many seconds."),
});

/** The shell the agent's commands run in: bash, or sh where bash is absent. */
export function agentShell(): string | null {
  return resolveProgram("bash", "/") ?? resolveProgram("sh", "/");
}

/** Runs a shell command in the agent sandbox: the workspace read-write, scrubbed environment, bounded output. */
export const bashTool: AgentTool<typeof schema> = {
  name: "bash",
  description:
    "Run a shell command (bash -c) with the workspace as the current directory. Use it to build, run " +
    "tests, search (grep, find) and inspect. It runs in a sandbox: only the workspace is writable, /tmp " +
    "is private and empty, the network is off unless the task allows it, and environment variables " +
    "from outside are not available. Returns the exit code and combined stdout/stderr; long output keeps " +
    "its head and tail. Commands are killed at the timeout; do not start servers that never exit.",
  schema,
  mutating: true,
  execute: async (args, ctx) => ({ result: await runBash(args, ctx) }),
};

async function runBash(args: z.infer<typeof schema>, ctx: ToolContext): Promise<ToolResult> {
  const started = performance.now();
  const shell = agentShell();
  if (!shell)
    throw new InfrastructureError(
      "neither bash nor sh was found in /usr/local/bin:/usr/bin:/bin; install bash (apt-get install -y bash)",
    );
  const ws = await realWorkspace(ctx.workspace);
  const timeoutMs = Math.min((args.timeout_seconds ?? Number.POSITIVE_INFINITY) * 1000, ctx.timeoutMs);
  const r = await runSandboxed(
    {
      argv: [shell, "-c", args.command],
      cwd: ws,
      writable: [ws],
      readonly: [],
      env: scrubbedEnv({ home: "/tmp" }),
      ...(ctx.dependencies?.length
        ? { dependencies: ctx.dependencies.map((d) => ({ source: d.source, target: `${ws}/${d.path}` })) }
        : {}),
      network: ctx.network,
      timeoutMs,
      maxOutputBytes: BASH_OUTPUT_CHARS,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    },
    ctx.sandbox,
  );
  const output = r.output.length ? r.output : "(no output)";
  if (r.spawnError) return toolError(args.command, `the command could not start: ${r.spawnError}`, started);
  if (r.timedOut)
    return toolError(
      args.command,
      `timed out after ${formatSeconds(timeoutMs)}: the command and everything it started were killed\n${output}`,
      started,
      r.exitCode,
    );
  if (ctx.signal?.aborted)
    return toolError(args.command, `cancelled: the command was killed\n${output}`, started);
  if (r.exitCode === null)
    return toolError(args.command, `killed by signal ${r.signal ?? "?"}\n${output}`, started, null);
  const content = `exit code: ${r.exitCode}\n${output}`;
  return r.exitCode === 0
    ? toolOk(args.command, content, started, 0)
    : toolError(args.command, content, started, r.exitCode);
}

function formatSeconds(ms: number): string {
  return `${Number((ms / 1000).toFixed(3))}s`;
}
