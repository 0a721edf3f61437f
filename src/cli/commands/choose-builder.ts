import { dirname } from "node:path";
import { commandBuilder, noopBuilder, oracleBuilder } from "../../builders/command-builder.js";
import { stopDeadlineSeconds } from "../../builders/stop-gate/stop-deadline.js";
import { InputError } from "../../core/kernel/errors.js";
import type { RunFlags } from "../../runner/host/run-flags.js";
import type { BuilderChoice } from "../../runner/run/context/builder-choice.js";
import type { LoadedTask } from "../../runner/task-source/load-task.js";

/**
 * Picks the builder from exactly one of --builder, --oracle, --noop, --model, --agent. The built-in agent
 * (agent/, with the AI SDK) and the Codex adapter are loaded here, only when chosen: `run --oracle` loads
 * neither.
 */
export async function chooseBuilder(
  loaded: LoadedTask,
  flags: RunFlags,
  cwd = process.cwd(),
): Promise<BuilderChoice> {
  const chosen = [
    flags.builder !== undefined,
    Boolean(flags.oracle),
    Boolean(flags.noop),
    flags.model !== undefined,
    flags.agent !== undefined,
  ].filter(Boolean).length;
  if (chosen !== 1)
    throw new InputError(
      "choose exactly one builder: --model PROVIDER:MODEL, --agent codex[:MODEL], --builder CMD, --oracle or --noop",
      "loopgate run",
    );
  if (flags.agent !== undefined) {
    const { agentAdapter } = await import("../../builders/codex/agent-flag.js");
    return agentAdapter(flags.agent, flags, stopDeadlineSeconds(loaded.task.gates));
  }
  if (flags.model === undefined)
    for (const f of [
      "record",
      "max-turns",
      "max-cost",
      "base-url",
      "no-step-checks",
      "step-escalation",
    ] as const)
      if (flags[f] !== undefined)
        throw new InputError("applies only to the built-in agent (--model)", `--${f}`);
  if (flags.model !== undefined) {
    const maxTurns = flags["max-turns"];
    const maxCostUsd = flags["max-cost"];
    const { agentBuilder } = await import("../../agent/agent-builder.js");
    return agentBuilder(flags.model, {
      ...(flags.record !== undefined ? { record: flags.record } : {}),
      ...(flags["base-url"] !== undefined ? { baseUrl: flags["base-url"] } : {}),
      ...(maxTurns !== undefined ? { maxTurns } : {}),
      ...(maxCostUsd !== undefined ? { maxCostUsd } : {}),
      ...(flags["no-step-checks"] ? { stepChecks: false } : {}),
      ...(flags["step-escalation"] !== undefined ? { stepEscalation: flags["step-escalation"] } : {}),
    });
  }
  if (flags.oracle) {
    if (!loaded.oracle) throw new InputError("the task declares no oracle", `${loaded.file}: oracle`);
    return oracleBuilder(loaded.oracle);
  }
  if (flags.noop) return noopBuilder();
  // Relative file paths in the command mean the caller's directory, as in a shell (see commandBuilder).
  return commandBuilder(flags.builder as string, cwd);
}

/**
 * The builder: the one the flags name, else the goal's own (`todo run` and `goal tick` alike). The built-in
 * agent is loaded only when it is the one chosen.
 */
export async function chosen(
  loaded: Parameters<typeof chooseBuilder>[0],
  flags: RunFlags,
  agent: { kind: string; model?: string; command?: string },
  sourcePath: string | null,
): Promise<BuilderChoice> {
  if (flags.model !== undefined || flags.builder !== undefined || flags.oracle || flags.noop)
    return chooseBuilder(loaded, flags);
  if (agent.kind === "agent" && agent.model) {
    const { agentBuilder } = await import("../../agent/agent-builder.js");
    return agentBuilder(agent.model, {});
  }
  if (agent.command === "@oracle") {
    if (!loaded.oracle) throw new InputError("the task declares no oracle", `${loaded.file}: oracle`);
    return oracleBuilder(loaded.oracle);
  }
  if (agent.command === "@noop") return noopBuilder();
  if (agent.command) return commandBuilder(agent.command, sourcePath ? dirname(sourcePath) : process.cwd());
  throw new InputError(
    "the goal names no builder: pass --model SPEC, --builder CMD, --oracle or --noop",
    `loopgate todo run ${loaded.task.id}`,
  );
}
