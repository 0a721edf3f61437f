import { existsSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { agentBuilder, normalizeModelSpec } from "../../agent/agent-builder.js";
import type { ModelAdapter } from "../../agent/model.js";
import { createModel } from "../../agent/models/provider.js";
import type { Builder } from "../../builders/builder.js";
import { commandBuilder, noopBuilder, oracleBuilder } from "../../builders/command-builder.js";
import { splitCommandLine } from "../../builders/command-line.js";
import type { Envelope } from "../../core/envelope.js";
import { InputError } from "../../core/errors.js";
import { type LoadedMissionCase, loadMissionCase } from "../../fixtures/mission-case.js";
import { type LoadedTask, loadTask } from "../../runner/load-task.js";
import { runTask } from "../../runner/run-task.js";
import type { SandboxMode } from "../../sandbox/bubblewrap.js";
import { openStore, storeDirFrom } from "../context.js";
import { formatEnvelope } from "../format.js";
import { handleInterrupts } from "../interrupt.js";
import { cliName } from "../invocation.js";
import type { CommandIO } from "../io.js";
import { progressReporter } from "../progress.js";
import { exitCodeOf } from "./inspect.js";

/** Flags shared by `run`, `verify` and `task check`. */
export interface RunFlags {
  builder?: string;
  oracle?: boolean;
  noop?: boolean;
  json?: boolean;
  store?: string;
  workspace?: string;
  "builder-env"?: string[];
  "builder-mount"?: string[];
  network?: boolean;
  "max-attempts"?: string;
  "unsafe-no-sandbox"?: boolean;
  model?: string;
  record?: string;
  "base-url"?: string;
  "max-turns"?: string;
  "max-cost"?: string;
  case?: string;
  "judge-model"?: string;
  "no-step-checks"?: boolean;
  "step-escalation"?: string;
}

/** Parses a positive number flag; a bad value is an InputError naming the flag. */
export function numberFlag(value: string | undefined, flag: string, integer: boolean): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n) || n <= 0 || (integer && !Number.isInteger(n)))
    throw new InputError(
      `expected a positive ${integer ? "whole " : ""}number, got ${JSON.stringify(value)}`,
      flag,
    );
  return n;
}

const inside = (parent: string, p: string) => p === parent || p.startsWith(`${parent}/`);

/** Picks the builder from exactly one of --builder, --oracle, --noop. */
export function chooseBuilder(loaded: LoadedTask, flags: RunFlags): Builder {
  const chosen = [
    flags.builder !== undefined,
    Boolean(flags.oracle),
    Boolean(flags.noop),
    flags.model !== undefined,
  ].filter(Boolean).length;
  if (chosen !== 1)
    throw new InputError(
      "choose exactly one builder: --model PROVIDER:MODEL, --builder CMD, --oracle or --noop",
      "loopgate run",
    );
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
    const maxTurns = numberFlag(flags["max-turns"], "--max-turns", true);
    const maxCostUsd = numberFlag(flags["max-cost"], "--max-cost", false);
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
  return commandBuilder(anchorProgram(flags.builder as string));
}

const shellQuote = (w: string) => `'${w.replace(/'/g, "'\\''")}'`;

/**
 * A relative program path (`./my-agent.sh`, `agents/fix.sh`) means the caller's directory, as in a
 * shell; the builder itself would look in the run workspace. Bare names still go through PATH.
 */
function anchorProgram(commandLine: string): string {
  const words = splitCommandLine(commandLine);
  const program = words[0] as string;
  if (!program.includes("/") || isAbsolute(program) || !existsSync(resolve(program))) return commandLine;
  return [resolve(program), ...words.slice(1)].map(shellQuote).join(" ");
}

/** Validates the options that reach the runner; a mount may never expose held-out material or the log. */
export function runSettings(loaded: LoadedTask, flags: RunFlags) {
  const storeDir = storeDirFrom(flags.store, join(loaded.dir, ".loopgate"));
  const mounts = (flags["builder-mount"] ?? []).map((m) => resolve(m));
  for (const m of mounts)
    for (const h of [...loaded.hidden, storeDir, loaded.dir])
      if (inside(m, h) || (h !== loaded.dir && inside(h, m)))
        throw new InputError(`${m} would expose ${h} to the builder`, "--builder-mount");
  for (const name of flags["builder-env"] ?? [])
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name))
      throw new InputError(`${JSON.stringify(name)} is not an environment variable name`, "--builder-env");
  let maxAttempts: number | undefined;
  if (flags["max-attempts"] !== undefined) {
    maxAttempts = Number(flags["max-attempts"]);
    if (!Number.isInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > 100)
      throw new InputError(
        `expected a whole number from 1 to 100, got ${flags["max-attempts"]}`,
        "--max-attempts",
      );
  }
  const sandbox: SandboxMode = flags["unsafe-no-sandbox"] ? "none" : "bubblewrap";
  return { storeDir, mounts, maxAttempts, sandbox };
}

/** Runs one task with one builder and reports; returns the envelope. */
export async function executeRun(
  io: CommandIO,
  loaded: LoadedTask,
  builder: Builder,
  flags: RunFlags,
  extra: { workFrom?: string; quiet?: boolean; maxAttempts?: number } = {},
): Promise<Envelope> {
  const s = runSettings(loaded, flags);
  const store = openStore(s.storeDir, true);
  const showProgress = !extra.quiet && (!flags.json || io.stderr.isTTY);
  // Ctrl-C or a CI cancel: kill the running builder or gate, record the run as interrupted, then exit.
  const interrupts = handleInterrupts((sig) =>
    io.err(`\nloopgate: ${sig}: stopping the run and recording it (press again to quit at once)\n`),
  );
  const reporter = showProgress ? progressReporter(io.stderr) : null;
  try {
    return await runTask({
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
      ...(reporter ? { reporter } : {}),
      ...judgeModelFor(loaded, flags),
    });
  } finally {
    reporter?.close();
    interrupts.dispose();
    await store.close();
  }
}

/** `loopgate run TASK (--builder CMD | --oracle | --noop)` or `loopgate run --case FILE (…)`. */
export async function runCommand(
  io: CommandIO,
  taskPath: string | undefined,
  flags: RunFlags,
): Promise<number> {
  const loaded = flags.case !== undefined ? loadCase(io, taskPath, flags) : loadTask(taskPath ?? "");
  const builder = chooseBuilder(loaded, flags);
  const env = await executeRun(io, loaded, builder, flags);
  printEnvelope(io, env, flags, loaded);
  return exitCodeOf(env.status);
}

/** A mission fixture (`--case FILE`) as the task; `--workspace DIR` binds it to an existing starting state. */
function loadCase(io: CommandIO, taskPath: string | undefined, flags: RunFlags): LoadedMissionCase {
  const file = flags.case as string;
  if (taskPath !== undefined)
    throw new InputError("give either TASK or --case FILE, not both", "loopgate run");
  const storeDir = storeDirFrom(flags.store, join(dirname(resolve(file)), ".loopgate"));
  const loaded = loadMissionCase(file, {
    storeDir,
    ...(flags.workspace !== undefined ? { against: flags.workspace } : {}),
  });
  const criteria = loaded.mission.criteria;
  const n = criteria ? (Array.isArray(criteria) ? criteria.length : Object.keys(criteria).length) : 0;
  if (n)
    io.err(
      `loopgate: note: ${file}: ${n} criteria recorded as local metadata, not enforced; only the artifact and preserve gates decide\n`,
    );
  return loaded;
}

/** `loopgate verify TASK --workspace DIR`: checks work produced elsewhere, one attempt, no builder. */
export async function verifyCommand(io: CommandIO, taskPath: string, flags: RunFlags): Promise<number> {
  if (!flags.workspace)
    throw new InputError("verify needs --workspace DIR, the folder holding the work", "loopgate verify");
  const loaded = loadTask(taskPath);
  const env = await executeRun(io, loaded, noopBuilder(), flags, { workFrom: resolve(flags.workspace) });
  printEnvelope(io, env, flags, loaded);
  return exitCodeOf(env.status);
}

function printEnvelope(io: CommandIO, env: Envelope, flags: RunFlags, loaded: LoadedTask): void {
  if (flags.json) {
    io.out(`${JSON.stringify(env, null, 2)}\n`);
    return;
  }
  const storeDir = storeDirFrom(flags.store, join(loaded.dir, ".loopgate"));
  const me = cliName();
  const resume =
    env.status === "TOOL_FAILURE" && env.reason.startsWith("interrupted (")
      ? `continue it: ${me} resume ${env.run_id} --store ${storeDir}\n`
      : "";
  io.out(`${formatEnvelope(env)}\naudit trail: ${me} events ${env.run_id} --store ${storeDir}\n${resume}`);
}

/** `loopgate task check TASK`: the oracle must reach SUCCESS and the no-op must not. */
export async function taskCheckCommand(io: CommandIO, taskPath: string, flags: RunFlags): Promise<number> {
  const loaded = loadTask(taskPath);
  if (!loaded.oracle)
    throw new InputError(
      "task check needs an oracle (a reference solution) to compare against",
      `${taskPath}: oracle`,
    );
  const oracle = await executeRun(io, loaded, oracleBuilder(loaded.oracle), flags, {
    quiet: true,
    maxAttempts: 1,
  });
  const noop = await executeRun(io, loaded, noopBuilder(), flags, { quiet: true, maxAttempts: 1 });
  const problems: string[] = [];
  if (oracle.status !== "SUCCESS")
    problems.push(
      `the oracle did not reach SUCCESS (${oracle.status}: ${oracle.reason}); the gates reject a correct solution`,
    );
  if (noop.status === "SUCCESS")
    problems.push(
      "the no-op builder reached SUCCESS: the gates do not discriminate between doing nothing and the fix",
    );
  const stillPassing = noop.gates.filter((g) => g.passed).map((g) => g.id);
  const result = {
    task_id: loaded.task.id,
    ok: problems.length === 0 && oracle.status === "SUCCESS" && noop.status !== "SUCCESS",
    oracle: { run_id: oracle.run_id, status: oracle.status, reason: oracle.reason },
    noop: {
      run_id: noop.run_id,
      status: noop.status,
      reason: noop.reason,
      gates_passed_without_work: stillPassing,
    },
    problems,
  };
  if (flags.json) io.out(`${JSON.stringify(result, null, 2)}\n`);
  else {
    io.out(`task ${loaded.task.id}\n`);
    io.out(`  oracle: ${oracle.status} (${oracle.reason})\n  no-op:  ${noop.status} (${noop.reason})\n`);
    if (stillPassing.length)
      io.out(
        `  note: these gates pass even when nothing is done (fine for guards): ${stillPassing.join(", ")}\n`,
      );
    io.out(
      result.ok
        ? "ok: the gates accept the oracle and reject the no-op\n"
        : `NOT ok:\n  ${problems.join("\n  ")}\n`,
    );
  }
  if (oracle.status === "TOOL_FAILURE" || noop.status === "TOOL_FAILURE") return 2;
  return result.ok ? 0 : 1;
}

/**
 * The judge's model: --judge-model, else the task's judge.model (a scripted/replay file there is
 * relative to the task file). Only when the task configures a judge.
 */
export function judgeModelFor(loaded: LoadedTask, flags: RunFlags): { judge?: ModelAdapter } {
  if (!loaded.task.judge) {
    if (flags["judge-model"] !== undefined)
      throw new InputError("the task configures no judge", "--judge-model");
    return {};
  }
  const fromTask = loaded.task.judge.model;
  const spec =
    flags["judge-model"] !== undefined
      ? normalizeModelSpec(flags["judge-model"])
      : fromTask?.replace(
          /^(scripted|replay):(?!\/)(.+)$/,
          (_m, kind: string, p: string) => `${kind}:${resolve(loaded.dir, p)}`,
        );
  if (!spec) return {};
  return { judge: createModel(spec) };
}
