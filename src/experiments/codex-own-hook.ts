import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Builder, BuilderContext, BuilderResult } from "../builders/builder.js";
import { providerDown } from "../builders/claude/claude-provider-error.js";
import { shellWord } from "../builders/claude/claude-settings.js";
import { codexConfig, findCodex } from "../builders/codex/codex-builder.js";
import { codexProviderFailure } from "../builders/codex/codex-provider-error.js";
import { codexFacts } from "../builders/codex/exec-events.js";
import { runSandboxed } from "../sandbox/bubblewrap.js";
import { SANDBOX_PATH, scrubbedEnv } from "../sandbox/environment.js";

const EXITS = ".stop-hook-exits";
const KEY = "LOOPGATE_CODEX_API_KEY";

/**
 * The `codex-stop-hook` baseline: Codex with its own Stop hook in the project (`.codex/config.toml` in
 * the workspace, which the agent can write; the workspace trusted in the private CODEX_HOME so project
 * hooks load, `--dangerously-bypass-hook-trust` so they run headless) running the visible test command
 * through `.codex/hooks/visible-tests.sh`, blocking (exit 2) when it fails. No loopgate hook. The pass
 * "exits 0" when Codex ended its session normally and the last Stop hook did not block: that is when such
 * a user believes the work is done. Later attempts change nothing.
 */
export function ownCodexStopHookBuilder(baseUrl: string, visible: readonly string[]): Builder {
  let first: BuilderResult | null = null;
  return {
    descriptor: { kind: "command", command: "codex exec (own project Stop hook)" },
    run: async (ctx: BuilderContext): Promise<BuilderResult> => {
      if (first) return { ...first, durationMs: 0, output: "(the Stop-hook baseline has one session)" };
      first = await session(baseUrl, visible, ctx);
      return first;
    },
  };
}

async function session(
  baseUrl: string,
  visible: readonly string[],
  ctx: BuilderContext,
): Promise<BuilderResult> {
  const codex = findCodex();
  if (!codex)
    return {
      exitCode: null,
      signal: null,
      timedOut: false,
      durationMs: 0,
      output: "",
      infrastructure: "codex not found",
    };
  const home = join(ctx.runDir ?? dirname(dirname(ctx.promptFile)), "codex-own-hook-home");
  mkdirSync(home, { recursive: true });
  writeFileSync(
    join(home, "config.toml"),
    `${codexConfig(baseUrl, "scripted", KEY)}\n[projects.${JSON.stringify(ctx.workspace)}]\ntrust_level = "trusted"\n`,
  );
  const hooks = join(ctx.workspace, ".codex", "hooks");
  mkdirSync(hooks, { recursive: true });
  const script = join(hooks, "visible-tests.sh");
  writeFileSync(
    script,
    `#!/bin/sh\n# Stop hook: the visible tests must pass before Codex may stop.\ncd ${shellWord(ctx.workspace)} || exit 2\nif ${visible.map(shellWord).join(" ")} > /tmp/visible-tests.log 2>&1; then exit 0; fi\ntail -20 /tmp/visible-tests.log >&2\nexit 2\n`,
    { mode: 0o755 },
  );
  const command = `sh ${shellWord(script)}; s=$?; echo $s >> ${shellWord(join(home, EXITS))}; exit $s`;
  writeFileSync(
    join(ctx.workspace, ".codex", "config.toml"),
    `[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = "command"\ncommand = ${JSON.stringify(command)}\ntimeout = 120\n`,
  );
  const r = await runSandboxed(
    {
      argv: [
        codex.binary,
        "exec",
        "--json",
        "--skip-git-repo-check",
        "--dangerously-bypass-hook-trust",
        "-s",
        "danger-full-access",
        "-C",
        ctx.workspace,
        ctx.prompt,
      ],
      cwd: ctx.workspace,
      writable: [ctx.workspace, home],
      readonly: [...ctx.mounts, ...codex.mounts],
      env: scrubbedEnv({
        home: "/tmp",
        extra: { PATH: [...codex.path, SANDBOX_PATH].join(":"), CODEX_HOME: home, [KEY]: "unused" },
      }),
      network: true,
      timeoutMs: ctx.timeoutMs,
      maxOutputBytes: 16_000,
      captureBytes: 8 * 1024 * 1024,
      ...(ctx.onOutput ? { onOutput: ctx.onOutput } : {}),
    },
    ctx.sandbox,
  );
  const stdout = r.streams?.stdout.toString("utf8") ?? r.output;
  const facts = codexFacts(stdout);
  // A provider that is down is infrastructure here too, never a graded failure of the baseline.
  const down = codexProviderFailure(stdout);
  const exits = existsSync(join(home, EXITS))
    ? readFileSync(join(home, EXITS), "utf8").split("\n").filter(Boolean)
    : [];
  const blocked = exits.at(-1) === "2";
  const normal = r.exitCode === 0 && !facts.turn_failed;
  return {
    exitCode: normal && !blocked ? 0 : 1,
    signal: r.signal,
    timedOut: r.timedOut,
    durationMs: r.durationMs,
    claim: facts.final_message,
    output: `codex exit ${r.exitCode}${facts.turn_failed ? " (turn failed)" : ""}; Stop hook exits: ${exits.join(",") || "none"}\n${facts.final_message}`,
    infrastructure: r.spawnError
      ? `codex could not start: ${r.spawnError}`
      : down
        ? providerDown(baseUrl, down)
        : null,
  };
}
