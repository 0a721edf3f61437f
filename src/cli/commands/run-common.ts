// What `run`, `verify` and `task check` share: their flags, the builder choice, the settings, one run.
import { dirname, isAbsolute, relative, resolve } from "node:path";
import type { ModelAdapter } from "../../agent/models/model.js";
import { commandBuilder, noopBuilder, oracleBuilder } from "../../builders/command-builder.js";
import { stopDeadlineSeconds } from "../../builders/stop-gate/stop-deadline.js";
import { InputError } from "../../core/kernel/errors.js";
import type { Envelope } from "../../core/run/envelope.js";
import type { RunFlags } from "../../runner/host/run-flags.js";
import { type BuilderChoice, isAgentChoice } from "../../runner/run/context/builder-choice.js";
import { checkUserMounts, mountGuards } from "../../runner/run/context/builder-mounts.js";
import { runTask } from "../../runner/run/run-task.js";
import type { LoadedTask } from "../../runner/task-source/load-task.js";
import type { SandboxMode } from "../../sandbox/bubblewrap.js";
import type { StoreLocation } from "../../store/open-store.js";
import { openStore, storeFrom } from "../output/context.js";
import { formatEnvelope } from "../output/format.js";
import { hintCommand, hintsFor, storeLine } from "../output/hints.js";
import { interruptRun } from "../output/interrupt.js";
import type { CommandIO } from "../output/io.js";
import { progressReporter } from "../output/progress.js";

/** Flags shared by `run`, `verify` and `task check` (a host reads them too: runner/host/run-flags.ts). */
export type { RunFlags } from "../../runner/host/run-flags.js";

/** Whether the user asked for the builder's and gates' output live (`--verbose` or `--follow`). */
export const followOutput = (flags: RunFlags) => Boolean(flags.verbose || flags.follow);

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

/** Validates the options that reach the runner; a mount may never expose held-out material or the log. */
export function runSettings(loaded: LoadedTask, flags: RunFlags) {
  const store = storeFrom(flags.store);
  const storeDir = store.dir;
  refuseStoreInWork(storeDir, loaded.workspace, "the task's workspace");
  if (flags.workspace !== undefined) refuseStoreInWork(storeDir, resolve(flags.workspace), "--workspace");
  const mounts = (flags["builder-mount"] ?? []).map((m) => resolve(m));
  checkUserMounts(mounts, mountGuards(loaded, storeDir));
  for (const name of flags["builder-env"] ?? [])
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw new InputError(`${JSON.stringify(name)} is not an environment variable name`, "--builder-env");
  const maxAttempts = flags["max-attempts"];
  const sandbox: SandboxMode = flags["unsafe-no-sandbox"] ? "none" : "bubblewrap";
  return { store, storeDir, mounts, maxAttempts, sandbox };
}

/**
 * A store inside the work would be copied into its own runs and reachable by the builder: refused, with
 * where to run from instead (the default store is found from the current folder).
 */
function refuseStoreInWork(storeDir: string, work: string, what: string): void {
  const rel = relative(work, storeDir);
  if (rel === "" || (!rel.startsWith("..") && !isAbsolute(rel)))
    throw new InputError(
      `the store ${storeDir} lies inside ${what} ${work}, where the builder could reach it and every run would copy it; run from a folder outside it, or pass --store DIR`,
      "--store",
    );
}

/** Runs one task with one builder and reports; returns the envelope. */
export async function executeRun(
  io: CommandIO,
  loaded: LoadedTask,
  builder: BuilderChoice,
  flags: RunFlags,
  extra: {
    workFrom?: string;
    quiet?: boolean;
    maxAttempts?: number;
    useTaskCheckFloors?: boolean;
    /** `record`: task check's oracle run, which records the lock; default: enforce the lock when valid. */
    identityMode?: "lock" | "record";
    /** A missing or stale lock is an error (default: `--strict`); task check's no-op run is judged by what it has. */
    strictLock?: boolean;
    goal?: { id: string; revision: string };
    /** The run's id (a governed turn's is derived from its identity, so readback can find it). */
    runId?: string;
  } = {},
): Promise<Envelope> {
  const s = runSettings(loaded, flags);
  const store = await openStore(s.store, true);
  // Progress goes to stderr; with --json it is shown on a terminal, or when asked for with --verbose.
  const showProgress = !extra.quiet && (!flags.json || io.stderr.isTTY || followOutput(flags));
  // Ctrl-C or a CI cancel: kill the running builder or gate, record the run as interrupted, then exit.
  const interrupts = interruptRun(io);
  const reporter = showProgress
    ? progressReporter(io.stderr, { verbose: followOutput(flags), hints: hintsFor(s.store) })
    : null;
  try {
    return await runTask({
      ...faultInjection(),
      signal: interrupts.signal,
      loaded,
      builder,
      store,
      storeDir: s.storeDir,
      sandbox: s.sandbox,
      allowEnv: flags["builder-env"] ?? [],
      mounts: s.mounts,
      ...(flags.network ? { network: true } : {}),
      ...(extra.workFrom ? { workFrom: extra.workFrom } : {}),
      ...((extra.maxAttempts ?? s.maxAttempts) !== undefined
        ? { maxAttempts: extra.maxAttempts ?? s.maxAttempts }
        : {}),
      ...(reporter
        ? { reporter }
        : extra.quiet
          ? {}
          : {
              reporter: {
                warning: (t: string) => io.err(`warning: ${t}\n`),
                note: (t: string) => io.err(`note: ${t}\n`),
              },
            }),
      ...(extra.useTaskCheckFloors === false ? { useTaskCheckFloors: false } : {}),
      ...(extra.identityMode ? { identityMode: extra.identityMode } : {}),
      ...((extra.strictLock ?? flags.strict) && extra.identityMode !== "record" ? { strictLock: true } : {}),
      ...(extra.goal ? { goal: extra.goal } : {}),
      ...(extra.runId ? { runId: extra.runId } : {}),
      ...(await judgeModelFor(loaded, flags)),
    });
  } finally {
    // A builder that outlives its attempts (an agent waiting on its Stop hook) never outlives the run.
    if (!isAgentChoice(builder)) await builder.dispose?.().catch(() => undefined);
    reporter?.close();
    interrupts.dispose();
    await store.close();
  }
}

/**
 * The envelope on stdout: JSON with --json, else the summary, how to see the audit trail (or resume), and
 * on the last line the store that holds the run. Every hint is a command that runs as printed here.
 */
export function printEnvelope(io: CommandIO, env: Envelope, flags: RunFlags): void {
  if (flags.json) {
    io.out(`${JSON.stringify(env, null, 2)}\n`);
    return;
  }
  io.out(verdictText(env, storeFrom(flags.store)));
}

/**
 * A verdict as people read it (run, verify, resume, status): the summary, the hints, the store.
 * `notResumable` (a loopgate claude run): an interrupted run is not offered `resume`, but this line.
 */
export function verdictText(env: Envelope, where: StoreLocation, notResumable?: string): string {
  const hints = hintsFor(where);
  const interrupted = env.status === "TOOL_FAILURE" && env.reason.startsWith("interrupted (");
  const resume = !interrupted
    ? ""
    : notResumable
      ? `${notResumable}\n`
      : `continue it: ${hintCommand(hints, `resume ${env.run_id}`)}\n`;
  return `${formatEnvelope(env, hints)}\naudit trail: ${hintCommand(hints, `events ${env.run_id}`)}\n${resume}${storeLine(where)}\n`;
}

/**
 * The judge's model: --judge-model, else the task's judge.model (a scripted/replay file there is
 * relative to the task file). Only when the task configures a judge.
 */
export async function judgeModelFor(loaded: LoadedTask, flags: RunFlags): Promise<{ judge?: ModelAdapter }> {
  if (!loaded.task.judge) {
    if (flags["judge-model"] !== undefined)
      throw new InputError("the task configures no judge", "--judge-model");
    return {};
  }
  const fromTask = loaded.task.judge.model;
  // The model providers (the AI SDK) are loaded only for a task with a judge.
  const { normalizeModelSpec } = await import("../../agent/agent-builder.js");
  const spec =
    flags["judge-model"] !== undefined
      ? normalizeModelSpec(flags["judge-model"])
      : fromTask?.replace(
          /^(scripted|replay):(?!\/)(.+)$/,
          (_m, kind: string, p: string) => `${kind}:${resolve(loaded.dir, p)}`,
        );
  if (!spec) return {};
  const { createModel } = await import("../../agent/models/provider.js");
  return { judge: createModel(spec) };
}

/**
 * Fault injection for the crash-and-resume tests: with LOOPGATE_FAULT_KILL_AFTER_EVENTS=N the process
 * kills itself (SIGKILL, no clean-up) right after the run's N-th event is durably appended.
 */
export function faultInjection(): { afterAppend?: (runEvents: number) => void } {
  const at = process.env.LOOPGATE_FAULT_KILL_AFTER_EVENTS;
  if (at === undefined) return {};
  return {
    afterAppend: (count) => (count === Number(at) ? process.kill(process.pid, "SIGKILL") : undefined),
  };
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
