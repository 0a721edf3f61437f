import { dirname } from "node:path";
import { agentBuilder } from "../../agent/agent-builder.js";
import type { Builder } from "../../builders/builder.js";
import { commandBuilder, noopBuilder, oracleBuilder } from "../../builders/command-builder.js";
import { projectEnvelope } from "../../core/envelope.js";
import { InputError } from "../../core/errors.js";
import type { EventData } from "../../core/events.js";
import { runPhase } from "../../core/run-phase.js";
import { resumeRun } from "../../runner/resume-run.js";
import { openStore, readRun, storeFrom } from "../context.js";
import { formatEnvelope } from "../format.js";
import { handleInterrupts } from "../interrupt.js";
import type { CommandIO } from "../io.js";
import { progressReporter } from "../progress.js";
import { exitCodeOf } from "./inspect.js";
import { followOutput, numberFlag, type RunFlags } from "./run.js";

/** `loopgate resume RUN`: continues an interrupted run from its log. */
export async function resumeCommand(io: CommandIO, runId: string, flags: RunFlags): Promise<number> {
  const where = storeFrom(flags.store, ".loopgate");
  let dir = where.dir;
  const store = await openStore(where, false, runId);
  // A run with a final verdict has nothing left to do: say so instead of reprinting it silently.
  // (An interrupted run is not final: resuming it continues it.)
  const finished = await readRun(store, where.label, runId).then(
    (events) => {
      // Beside a Postgres log, run folders live on the machine that ran them: <folder>/runs/<run id>.
      const started = events[0];
      if (where.kind === "postgres" && started?.type === "run_started")
        dir = dirname(dirname(started.data.run_dir));
      return runPhase(events) === "finished" ? projectEnvelope(runId, events) : null;
    },
    async (e: unknown) => {
      await store.close();
      throw e;
    },
  );
  if (finished) {
    await store.close();
    io.err(
      `loopgate resume: run ${runId} already finished (${finished.status}: ${finished.reason}); nothing to resume. Its envelope:\n`,
    );
    io.out(flags.json ? `${JSON.stringify(finished, null, 2)}\n` : `${formatEnvelope(finished)}\n`);
    return exitCodeOf(finished.status);
  }
  const interrupts = handleInterrupts((sig) =>
    io.err(`\nloopgate: ${sig}: stopping the run and recording it (press again to quit at once)\n`),
  );
  const reporter =
    !flags.json || io.stderr.isTTY || followOutput(flags)
      ? progressReporter(io.stderr, { verbose: followOutput(flags) })
      : null;
  try {
    const maxTurns = numberFlag(flags["max-turns"], "--max-turns", true);
    const maxCostUsd = numberFlag(flags["max-cost"], "--max-cost", false);
    const env = await resumeRun({
      runId,
      store,
      storeDir: dir,
      allowEnv: flags["builder-env"] ?? [],
      mounts: flags["builder-mount"] ?? [],
      signal: interrupts.signal,
      ...(reporter ? { reporter } : {}),
      builder: recordedBuilder(flags, maxTurns, maxCostUsd),
    });
    io.out(flags.json ? `${JSON.stringify(env, null, 2)}\n` : `${formatEnvelope(env)}\n`);
    return exitCodeOf(env.status);
  } finally {
    reporter?.close();
    interrupts.dispose();
    await store.close();
  }
}

/** Rebuilds a run's builder from what its run_started recorded (the model cannot be stored), as resume does. */
export function recordedBuilder(
  flags: RunFlags,
  maxTurns = numberFlag(flags["max-turns"], "--max-turns", true),
  maxCostUsd = numberFlag(flags["max-cost"], "--max-cost", false),
): (d: EventData<"run_started">["builder"], responses: number) => Builder {
  return (d, responses) => {
    switch (d.kind) {
      case "agent":
        return agentBuilder(d.command ?? "", {
          position: responses,
          ...(flags["base-url"] !== undefined ? { baseUrl: flags["base-url"] } : {}),
          ...((maxTurns ?? d.max_turns) !== undefined ? { maxTurns: maxTurns ?? d.max_turns } : {}),
          ...((maxCostUsd ?? d.max_cost_usd) !== undefined
            ? { maxCostUsd: maxCostUsd ?? d.max_cost_usd }
            : {}),
          ...(d.step_checks === false ? { stepChecks: false } : {}),
          ...(d.step_escalation !== undefined ? { stepEscalation: d.step_escalation } : {}),
        });
      case "command":
        return commandBuilder(d.command ?? "");
      case "oracle":
        return oracleBuilder(d.command ?? "");
      case "noop":
      case "workspace":
        return noopBuilder();
      default:
        throw new InputError(`cannot rebuild a builder of kind ${String(d.kind)}`);
    }
  };
}
