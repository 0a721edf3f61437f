import { existsSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { agentBuilder } from "../agent/agent-builder.js";
import { commandBuilder, noopBuilder, oracleBuilder } from "../builders/command-builder.js";
import { splitCommandLine } from "../builders/command-line.js";
import { InputError } from "../core/kernel/errors.js";
import { isDifferentialGate, isSubprocessGate } from "../core/task/task.js";
import type { BuilderChoice } from "../runner/run/context/builder-choice.js";
import { type LoadedTask, loadTask } from "../runner/task-source/load-task.js";
import { scriptedAgentBuilder } from "./agent-builders.js";
import type { Arm, BuilderSpec, LoadedManifest, Policy, TaskEntry } from "./manifest.js";

/** One task of the experiment, loaded, with the manifest's overrides applied in memory. */
export interface PlannedTask {
  entry: TaskEntry;
  loaded: LoadedTask;
  maxAttempts: number;
  /** A fresh builder per run (a scripted model keeps its position), by arm id; absent for derived arms. */
  builders: Map<string, () => BuilderChoice>;
}

/** Everything validated before the first run: bad input is reported before anything runs. */
export interface ExperimentPlan {
  source: LoadedManifest;
  control: string;
  /** Arms that run their own builds, then arms that judge another arm's runs. */
  arms: Arm[];
  tasks: PlannedTask[];
}

const quote = (w: string) => `'${w.replace(/'/g, "'\\''")}'`;

/** A relative program path in a builder command means the manifest's folder. */
function anchorCommand(line: string, dir: string, where: string): string {
  let words: string[];
  try {
    words = splitCommandLine(line);
  } catch (e) {
    throw new InputError((e as Error).message, where);
  }
  const program = words[0];
  if (!program) throw new InputError("the command names no program", where);
  if (!program.includes("/") || isAbsolute(program)) return words.map(quote).join(" ");
  const abs = resolve(dir, program);
  if (!existsSync(abs)) throw new InputError(`${abs} does not exist`, where);
  return [abs, ...words.slice(1)].map(quote).join(" ");
}

/** `scripted:` and `replay:` files are relative to the manifest's folder. */
function anchorModel(spec: string, dir: string): string {
  const m = /^(scripted|replay):(.+)$/.exec(spec);
  if (!m?.[1] || !m[2] || isAbsolute(m[2])) return spec;
  return `${m[1]}:${resolve(dir, m[2])}`;
}

/** Validates a builder spec now and returns a factory of fresh builders. */
export function builderFactory(
  spec: BuilderSpec,
  loaded: LoadedTask,
  dir: string,
  where: string,
  policy: Policy = "loopgate",
): () => BuilderChoice {
  if (spec.agent) return agentFactory(spec.agent, loaded, dir, where, policy);
  if (policy === "claude-stop-hook" || policy === "codex-stop-hook")
    throw new InputError(`the ${policy} policy runs a real agent: give it an agent builder`, where);
  if (spec.noop) return () => noopBuilder();
  if (spec.oracle) {
    const oracle = loaded.oracle;
    if (!oracle) throw new InputError(`the task ${loaded.file} declares no oracle`, where);
    return () => oracleBuilder(oracle);
  }
  if (spec.model !== undefined) {
    const model = anchorModel(spec.model, dir);
    try {
      agentBuilder(model);
    } catch (e) {
      throw new InputError((e as Error).message, where);
    }
    return () => agentBuilder(model);
  }
  const line = anchorCommand(spec.command ?? "", dir, where);
  return () => commandBuilder(line, dir);
}

/** Loads every task, resolves every (task, arm) builder and orders the arms; throws InputError on bad input. */
export function planExperiment(source: LoadedManifest): ExperimentPlan {
  const { manifest: m, dir, where } = source;
  const ownArms = m.arms.filter((a) => a.from === undefined);
  const tasks = m.tasks.map((entry, i): PlannedTask => {
    let loaded: LoadedTask;
    try {
      loaded = loadTask(resolve(dir, entry.task));
    } catch (e) {
      throw new InputError((e as Error).message, where(["tasks", i, "task"]));
    }
    const timeout = entry.gate_timeout ?? m.gate_timeout;
    if (timeout !== undefined)
      for (const g of loaded.task.gates)
        if (isSubprocessGate(g) || isDifferentialGate(g)) g.timeout = timeout;
    const builders = new Map<string, () => BuilderChoice>();
    for (const arm of ownArms) {
      const own = entry.builders?.[arm.id];
      const [spec, path] = own
        ? [own, ["tasks", i, "builders", arm.id]]
        : arm.builder
          ? [arm.builder, ["arms", m.arms.indexOf(arm), "builder"]]
          : [entry.builder, ["tasks", i, "builder"]];
      if (!spec) throw new InputError(`no builder for arm ${arm.id}`, where(["tasks", i]));
      builders.set(arm.id, builderFactory(spec, loaded, dir, where(path), arm.policy));
    }
    return {
      entry,
      loaded,
      maxAttempts: entry.max_attempts ?? m.max_attempts ?? loaded.task.budget.attempts,
      builders,
    };
  });
  const derived = m.arms.filter((a) => a.from !== undefined);
  const firstArm = m.arms[0] as Arm;
  return { source, control: m.control ?? firstArm.id, arms: [...ownArms, ...derived], tasks };
}

/** A real agent driven by its script; the claude-/codex-stop-hook policies get the agent with its own Stop hook. */
function agentFactory(
  agent: NonNullable<BuilderSpec["agent"]>,
  loaded: LoadedTask,
  dir: string,
  where: string,
  policy: Policy,
): () => BuilderChoice {
  const script = resolve(dir, agent.script);
  if (!existsSync(script)) throw new InputError(`${script} does not exist`, where);
  if (policy !== "claude-stop-hook" && policy !== "codex-stop-hook")
    return () => scriptedAgentBuilder({ name: agent.name, script });
  const wanted = policy === "claude-stop-hook" ? "claude-code" : "codex";
  if (agent.name !== wanted)
    throw new InputError(`the ${policy} policy runs ${wanted}, not ${agent.name}`, where);
  const visible = loaded.task.gates.find((g) => isSubprocessGate(g) && !g.heldout);
  if (!visible || !isSubprocessGate(visible))
    throw new InputError(`the ${policy} policy needs a visible (not held-out) subprocess gate`, where);
  const argv = visible.run;
  return () => scriptedAgentBuilder({ name: agent.name, script, ownStopHook: argv });
}
