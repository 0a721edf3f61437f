import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { commandBuilder, noopBuilder, oracleBuilder } from "../../builders/command-builder.js";
import type { EventData } from "../../core/events/loopgate-event.js";
import { InputError } from "../../core/kernel/errors.js";
import { projectEnvelope } from "../../core/run/envelope.js";
import { runPhase } from "../../core/run/run-phase.js";
import { revisionTree } from "../../runner/goal/repo/goal-workspace.js";
import type { RunFlags } from "../../runner/host/run-flags.js";
import type { BuilderChoice } from "../../runner/run/context/builder-choice.js";
import { resumeRun } from "../../runner/run/resume-run.js";
import type { LoadedTask } from "../../runner/task-source/load-task.js";
import { materializeTask, TASK_SNAPSHOT_OPTION } from "../../runner/task-source/snapshot-store.js";
import type { EventStore } from "../../store/kernel/event-store.js";
import { asPostgresStore } from "../../store/open-store.js";
import { detachOverlay, overlayOf } from "../../workspace/overlay-workspace.js";
import { openStore, readRun, storeFrom } from "../output/context.js";
import { exitCodeOf } from "../output/exit-codes.js";
import { hintCommand, hintsFor } from "../output/hints.js";
import { interruptRun } from "../output/interrupt.js";
import type { CommandIO } from "../output/io.js";
import { progressReporter } from "../output/progress.js";
import { CLAUDE_NOT_RESUMABLE, claudeRerun } from "../output/run-owner.js";
import { followOutput } from "../output/run-reporter.js";
import { verdictText } from "../output/verdict-lines.js";
import { faultInjection } from "./fault-injection.js";

/**
 * A queued run whose task file is not on this machine: the task snapshot its job holds, written out in
 * this machine's folder (as a worker does). Undefined when the recorded path is here or there is none.
 */
async function snapshotTask(
  store: EventStore,
  runId: string,
  dir: string,
  recorded: string,
): Promise<LoadedTask | undefined> {
  const pgStore = asPostgresStore(store);
  if (!pgStore || existsSync(recorded)) return undefined;
  const job = await pgStore.queue().find({ runId });
  const snapshot = job?.options[TASK_SNAPSHOT_OPTION];
  if (!job || typeof snapshot !== "string") return undefined;
  return materializeTask(pgStore.content(), snapshot, dir, job.taskDigest);
}

/** `loopgate resume RUN`: continues an interrupted run from its log. */
export async function resumeCommand(io: CommandIO, runId: string, flags: RunFlags): Promise<number> {
  const where = storeFrom(flags.store);
  let dir = where.dir;
  let runDir: string | undefined;
  let recordedTask: string | undefined;
  let claudeTask: string | undefined;
  let recordedRunDir: string | undefined;
  const store = await openStore(where, false, runId);
  // A run with a final verdict has nothing left to do: say so instead of reprinting it silently.
  // (An interrupted run is not final: resuming it continues it.)
  const finished = await readRun(store, where.label, runId).then(
    (events) => {
      // Beside a Postgres log, run folders live on the machine that ran them: <folder>/runs/<run id>.
      // On another machine (no such folder here) the run is resumed in this one's folder, rebuilt from
      // the observations the store keeps.
      const started = events[0];
      if (started?.type === "run_started") recordedRunDir = started.data.run_dir;
      if (started?.type === "run_started" && started.data.builder.kind === "claude-code")
        claudeTask = started.data.task_path;
      if (where.kind === "postgres" && started?.type === "run_started") {
        recordedTask = started.data.task_path;
        if (existsSync(started.data.run_dir)) dir = dirname(dirname(started.data.run_dir));
        else runDir = join(where.dir, "runs", runId);
      }
      return runPhase(events) === "finished" ? projectEnvelope(runId, events) : null;
    },
    async (e: unknown) => {
      await store.close();
      throw e;
    },
  );
  if (finished) {
    await store.close();
    // A run killed between its verdict and its unmount still holds its overlay workspace: released here.
    const overlay = recordedRunDir && existsSync(recordedRunDir) ? overlayOf(recordedRunDir) : null;
    if (overlay) detachOverlay(overlay);
    io.err(
      `loopgate resume: run ${runId} already finished (${finished.status}: ${finished.reason}); nothing to resume. Its envelope:\n`,
    );
    io.out(flags.json ? `${JSON.stringify(finished, null, 2)}\n` : verdictText(finished, where));
    return exitCodeOf(finished.status);
  }
  if (claudeTask !== undefined) {
    await store.close();
    throw new InputError(
      `${CLAUDE_NOT_RESUMABLE}; run its task again: ${claudeRerun(hintCommand(hintsFor(where), `resume ${runId}`), claudeTask)}`,
      "loopgate resume",
    );
  }
  const interrupts = interruptRun(io);
  const reporter =
    !flags.json || io.stderr.isTTY || followOutput(flags)
      ? progressReporter(io.stderr, { verbose: followOutput(flags), hints: hintsFor(where), runId })
      : null;
  try {
    const copy = recordedTask ? await snapshotTask(store, runId, dir, recordedTask) : undefined;
    const maxTurns = flags["max-turns"];
    const maxCostUsd = flags["max-cost"];
    const env = await resumeRun({
      ...faultInjection(),
      runId,
      store,
      localDir: dir,
      startingTree: (g) => revisionTree(dir, g.id, g.revision),
      ...(runDir ? { runDir } : {}),
      allowEnv: flags["builder-env"] ?? [],
      mounts: flags["builder-mount"] ?? [],
      signal: interrupts.signal,
      ...(reporter ? { reporter } : {}),
      builder: recordedBuilder(flags, maxTurns, maxCostUsd, copy?.oracle),
      ...(copy ? { taskFile: copy.file } : {}),
    });
    io.out(flags.json ? `${JSON.stringify(env, null, 2)}\n` : verdictText(env, where));
    return exitCodeOf(env.status);
  } finally {
    reporter?.close();
    interrupts.dispose();
    await store.close();
  }
}

/**
 * Rebuilds a run's builder from what its run_started recorded (the model cannot be stored), as resume does.
 * The built-in agent and the Codex adapter are loaded only for a run that recorded them.
 */
export function recordedBuilder(
  flags: RunFlags,
  maxTurns: number | undefined = flags["max-turns"],
  maxCostUsd: number | undefined = flags["max-cost"],
  /** The task's oracle on this machine, for a run checked by a copy of its task (a snapshot written out here). */
  oracle?: string | null,
): (d: EventData<"run_started">["builder"], responses: number) => Promise<BuilderChoice> {
  return async (d, responses) => {
    switch (d.kind) {
      case "agent": {
        const { agentBuilder } = await import("../../agent/agent-builder.js");
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
      }
      case "command": {
        const { codexFromDescriptor } = await import("../../builders/codex/codex-builder.js");
        return codexFromDescriptor(d.command) ?? commandBuilder(d.command ?? "");
      }
      case "oracle":
        return oracleBuilder(oracle ?? d.command ?? "");
      case "noop":
      case "workspace":
        return noopBuilder();
      case "claude-code":
        throw new InputError(
          "a loopgate claude run cannot be resumed yet (its Claude Code session ended with the process); start a new run of its task with the claude command",
          "loopgate resume",
        );
      default:
        throw new InputError(`cannot rebuild a builder of kind ${String(d.kind)}`);
    }
  };
}
