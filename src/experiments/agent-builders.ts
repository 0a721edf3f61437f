import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { type ModelServer, startModelServer } from "../agent/models/model-server/server.js";
import type { Builder, BuilderContext, BuilderResult } from "../builders/builder.js";
import { ClaudeBuilder } from "../builders/claude/claude-builder.js";
import { ClaudeProviderWatch, providerDown } from "../builders/claude/claude-provider-error.js";
import { shellWord } from "../builders/claude/claude-settings.js";
import { StreamJsonReader } from "../builders/claude/stream-json.js";
import { codexBuilder, findCodex } from "../builders/codex/codex-builder.js";
import { packagePath } from "../core/kernel/package-root.js";
import type { AgentRuntimeEventBody } from "../core/run/run-decider.js";
import { runSandboxed } from "../sandbox/bubblewrap.js";
import { scrubbedEnv } from "../sandbox/environment.js";
import { ownCodexStopHookBuilder } from "./codex-own-hook.js";

/** A real agent CLI driven by a scripted model file through a private `loopgate model-server` per run. */
export interface ScriptedAgentSpec {
  name: "claude-code" | "codex";
  /** Absolute path of the scripted model file. */
  script: string;
  /** `claude-stop-hook` / `codex-stop-hook`: the agent's own project Stop hook runs this visible test command; no loopgate hooks. */
  ownStopHook?: readonly string[];
}

/** The pinned claude binary beside loopgate (node_modules/.bin), or null. */
export function findClaudeBinary(): string | null {
  const beside = packagePath("node_modules", ".bin", "claude");
  return existsSync(beside) ? realpathSync(beside) : null;
}

/** Why the agent's binary cannot run here, or null. */
export function agentMissing(name: ScriptedAgentSpec["name"]): string | null {
  if (name === "claude-code")
    return findClaudeBinary() ? null : "claude not found under node_modules/.bin (npm ci installs it)";
  return findCodex() ? null : "codex not found under node_modules/.bin (npm ci installs it)";
}

/**
 * The builder of one run: it starts the model-server on first use (the script's position lasts
 * across the run's attempts), hands its URL to the real agent's builder, and closes it at wind-down.
 */
export function scriptedAgentBuilder(spec: ScriptedAgentSpec): Builder {
  let server: ModelServer | null = null;
  let inner: Builder | null = null;
  const protocol = spec.name === "claude-code" ? "anthropic" : "openai-responses";
  const start = async (): Promise<Builder> => {
    if (inner) return inner;
    server = await startModelServer({ protocol, script: spec.script });
    const env = { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "sk-model-server-dummy-key" };
    const claude = findClaudeBinary() ?? "claude";
    inner =
      spec.name === "codex"
        ? spec.ownStopHook
          ? ownCodexStopHookBuilder(`${server.url}/v1`, spec.ownStopHook)
          : codexBuilder({ baseUrl: `${server.url}/v1`, model: "scripted" })
        : spec.ownStopHook
          ? ownStopHookBuilder(claude, env, spec.ownStopHook)
          : new ClaudeBuilder({ program: claude, extraArgs: [], stopDeadlineSeconds: 180, providerEnv: env });
    return inner;
  };
  const close = async () => {
    await (inner as { dispose?: () => Promise<void> } | null)?.dispose?.();
    await server?.close();
    server = null;
  };
  return {
    descriptor: {
      kind: "command",
      command: `${spec.name} driven by ${spec.script} through loopgate model-server${spec.ownStopHook ? " (its own project Stop hook, no loopgate hooks)" : ""}`,
    },
    preflight: () => agentMissing(spec.name),
    run: async (ctx) => (await start()).run(ctx),
    windDown: async (v) => {
      const facts: AgentRuntimeEventBody[] = (await inner?.windDown?.(v)) ?? [];
      await close();
      return facts;
    },
  };
}

const EXITS = ".stop-hook-exits";

/**
 * The agent-side baseline most users have: Claude Code with a Stop hook in the project settings
 * (`.claude/settings.json` in the workspace, which the agent can write) running the visible test
 * command through `.claude/hooks/visible-tests.sh`, blocking (exit 2) when it fails. No loopgate
 * hook. The pass "exits 0" when Claude ended its session normally and the last Stop hook did not
 * block: that is when such a user believes the work is done. Later attempts change nothing.
 */
function ownStopHookBuilder(
  program: string,
  env: Record<string, string>,
  visible: readonly string[],
): Builder {
  let first: BuilderResult | null = null;
  return {
    descriptor: { kind: "command", command: "claude -p (own Stop hook)" },
    run: async (ctx: BuilderContext): Promise<BuilderResult> => {
      if (first) return { ...first, durationMs: 0, output: "(the Stop-hook baseline has one session)" };
      first = await ownStopHookSession(program, env, visible, ctx);
      return first;
    },
  };
}

async function ownStopHookSession(
  program: string,
  env: Record<string, string>,
  visible: readonly string[],
  ctx: BuilderContext,
): Promise<BuilderResult> {
  const home = join(ctx.runDir ?? dirname(dirname(ctx.promptFile)), "claude-own-hook-home");
  mkdirSync(join(home, ".claude"), { recursive: true });
  const hooks = join(ctx.workspace, ".claude", "hooks");
  mkdirSync(hooks, { recursive: true });
  writeFileSync(
    join(hooks, "visible-tests.sh"),
    `#!/bin/sh\n# Stop hook: the visible tests must pass before Claude may stop.\ncd "$CLAUDE_PROJECT_DIR" || exit 2\nif ${visible.map(shellWord).join(" ")} > /tmp/visible-tests.log 2>&1; then exit 0; fi\ntail -20 /tmp/visible-tests.log >&2\nexit 2\n`,
    { mode: 0o755 },
  );
  const command = `sh "$CLAUDE_PROJECT_DIR/.claude/hooks/visible-tests.sh"; s=$?; echo $s >> "$HOME/${EXITS}"; exit $s`;
  writeFileSync(
    join(ctx.workspace, ".claude", "settings.json"),
    `${JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: "command", command, timeout: 120 }] }] } }, null, 2)}\n`,
  );
  const reader = new StreamJsonReader();
  const watch = new ClaudeProviderWatch();
  const r = await runSandboxed(
    {
      argv: [
        program,
        "-p",
        ctx.prompt,
        "--output-format",
        "stream-json",
        "--verbose",
        "--setting-sources",
        "project",
        "--allowedTools",
        "Bash,Edit,Write,Read,Glob,Grep",
      ],
      cwd: ctx.workspace,
      writable: [ctx.workspace, home],
      readonly: [...ctx.mounts, dirname(dirname(program))],
      env: scrubbedEnv({
        home,
        extra: { ...env, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1", DISABLE_AUTOUPDATER: "1" },
      }),
      network: true,
      timeoutMs: ctx.timeoutMs,
      maxOutputBytes: 16_000,
      onOutput: (chunk) => {
        reader.push(chunk);
        watch.push(chunk);
        ctx.onOutput?.(chunk);
      },
    },
    ctx.sandbox,
  );
  reader.end();
  const result = reader.report.result ?? {};
  const exits = existsSync(join(home, EXITS))
    ? readFileSync(join(home, EXITS), "utf8").split("\n").filter(Boolean)
    : [];
  const blocked = exits.at(-1) === "2";
  const normal = r.exitCode === 0 && result.is_error !== true;
  const said = typeof result.result === "string" ? result.result : "";
  return {
    exitCode: normal && !blocked ? 0 : 1,
    signal: r.signal,
    timedOut: r.timedOut,
    durationMs: r.durationMs,
    claim: said,
    output: `claude exit ${r.exitCode}${result.is_error === true ? " (error result)" : ""}; Stop hook exits: ${exits.join(",") || "none"}\n${said}`,
    // A provider that is down is infrastructure here too, never a graded failure of the baseline.
    infrastructure: r.spawnError
      ? `claude could not start: ${r.spawnError}`
      : watch.push("\n")
        ? providerDown(env.ANTHROPIC_BASE_URL ?? "https://api.anthropic.com", watch.failure ?? "")
        : null,
  };
}
