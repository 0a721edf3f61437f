import { realpathSync } from "node:fs";
import { dirname } from "node:path";
import { runSandboxed } from "../../sandbox/bubblewrap.js";
import { scrubbedEnv } from "../../sandbox/environment.js";
import type { ProcessResult } from "../../sandbox/process.js";
import type { BuilderContext } from "../builder.js";
import { STOP_GRACE_MS } from "../stop-gate/session-halt.js";

/** Claude Code's own environment switches: no telemetry or update checks; only the provider is reached. */
const CLAUDE_ENV = {
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
  DISABLE_AUTOUPDATER: "1",
  DISABLE_TELEMETRY: "1",
};

/** What one start of `claude` in its sandbox needs. */
export interface ClaudeStart {
  program: string;
  args: readonly string[];
  ctx: BuilderContext;
  /** Claude's private home (writable) and its settings, read-only beside the hooks. */
  home: string;
  settingsFile: string;
  userSettings: string;
  providerEnv: Readonly<Record<string, string>> | undefined;
  onOutput: (chunk: string) => void;
  /** Its stdout alone: the stream-json that confirms hook reports. */
  onStdout: (chunk: string) => void;
  signal: AbortSignal;
}

/**
 * Starts Claude Code in the attempt's sandbox: the workspace and its home writable; its package, settings,
 * the prompt and the task's mounts read-only; a scrubbed environment with the provider's variables; the
 * network on (it reaches its provider). A start that cannot be spawned is a result with its spawn error,
 * never a throw, so the builder reports it as it reports any exit.
 */
export function startClaude(c: ClaudeStart): Promise<ProcessResult> {
  const { ctx } = c;
  const pkg = dirname(dirname(realpathSync(c.program)));
  try {
    return runSandboxed(
      {
        argv: [c.program, ...c.args],
        cwd: ctx.workspace,
        writable: [ctx.workspace, c.home],
        readonly: [...ctx.mounts, pkg, dirname(c.settingsFile), c.userSettings, dirname(ctx.promptFile)],
        ...(ctx.masked?.length ? { masked: ctx.masked } : {}),
        ...(ctx.dependencies?.length ? { dependencies: ctx.dependencies } : {}),
        env: scrubbedEnv({
          home: c.home,
          allow: ctx.allowEnv,
          extra: { ...CLAUDE_ENV, ...c.providerEnv, LOOPGATE_RUN_ID: ctx.runId },
        }),
        network: true,
        timeoutMs: 24 * 3600_000,
        maxOutputBytes: 16_000,
        onOutput: c.onOutput,
        onStdout: c.onStdout,
        signal: c.signal,
        killGraceMs: STOP_GRACE_MS,
        ...(ctx.limits ? { limits: ctx.limits } : {}),
      },
      ctx.sandbox,
    );
  } catch (e) {
    return Promise.resolve({
      exitCode: null,
      signal: null,
      timedOut: false,
      durationMs: 0,
      output: "",
      spawnError: (e as Error).message,
    } as ProcessResult);
  }
}
