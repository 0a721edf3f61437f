import { resolve } from "node:path";
import { createModel } from "../../agent/models/provider.js";
import { noopBuilder } from "../../builders/command-builder.js";
import { InputError, LoopgateError } from "../../core/errors.js";
import { openGoal } from "../../runner/goal/goal-service.js";
import type { AfterGoalAppend } from "../../runner/goal/turn/goal-journal.js";
import { tick } from "../../runner/goal/turn/tick.js";
import type { RunHost } from "../../runner/goal/turn/tick-context.js";
import type { TickOutcome, TickProgress } from "../../runner/goal/turn/tick-outcome.js";
import type { WritebackPoint } from "../../runner/goal/turn/writeback.js";
import { resumeRun } from "../../runner/resume-run.js";
import type { CommandIO } from "../io.js";
import { goalStoreDir, guarded, withStore } from "./goal.js";
import { chosen } from "./goal-todo-run.js";
import { recordedBuilder } from "./resume.js";
import { executeRun, faultInjection, type RunFlags } from "./run-common.js";

/** `goal tick`'s flags: the run flags of `todo run`, and the agent the turn runs as. */
export type TickFlags = RunFlags & { "agent-id"?: string; "planner-model"?: string };

/** A tick's outcome as an exit code (as `goal run`): 0 advanced or terminal, 1 waiting/throttled/busy/idle/stopped, 2 failed. */
export function tickExitCode(o: TickOutcome): number {
  if (o.kind === "advanced" || o.kind === "terminal") return 0;
  return o.kind === "failed" ? 2 : 1;
}

/** One line of a tick's progress. */
export const formatProgress = (p: TickProgress) =>
  `turn ${p.turn}${p.todo ? ` · ${p.todo}` : ""} · ${p.phase}: ${p.detail}`;

/** The outcome in words: what happened, and when to look again. */
export function formatOutcome(o: TickOutcome): string {
  const wake = `next wake-up: ${o.wake.action}${o.wake.at ? ` at ${o.wake.at}` : ""}${o.wake.why ? ` (${o.wake.why})` : ""}`;
  const what = (() => {
    switch (o.kind) {
      case "advanced":
        return `advanced: ${o.result}`;
      case "idle":
        return `idle: ${o.reason}`;
      case "waiting_person":
        return `waiting on ${o.who}: gate ${o.gate_id}`;
      case "throttled":
        return `throttled: ${o.reason}`;
      case "terminal":
        return `terminal: ${o.closure}`;
      case "stopped":
        return `stopped: ${o.reason}`;
      case "busy":
        return `busy: turn in progress by ${o.holder} until ${o.expires_at}`;
      case "failed":
        return `failed (${o.code}): ${o.detail}`;
    }
  })();
  return `${what}\n${wake}`;
}

/**
 * Kill-point fault injection for the crash tests: with LOOPGATE_FAULT_KILL_AFTER_GOAL_EVENTS=N the
 * process kills itself (SIGKILL) right after the append that brings the goal stream to N events
 * (heartbeats not counted); with LOOPGATE_FAULT_KILL_IN_WRITEBACK=commit_written|ref_moved, inside the
 * writeback (the commit object written; the branch moved, the work tree not yet).
 * LOOPGATE_FAULT_KILL_AFTER_EVENTS=N still kills inside the turn's run.
 */
export function goalFaultInjection(): {
  afterGoalAppend?: AfterGoalAppend;
  atWritebackPoint?: (point: WritebackPoint) => void;
} {
  const at = process.env.LOOPGATE_FAULT_KILL_AFTER_GOAL_EVENTS;
  const inWriteback = process.env.LOOPGATE_FAULT_KILL_IN_WRITEBACK;
  const n = Number(at);
  return {
    ...(at === undefined
      ? {}
      : {
          afterGoalAppend: (before: number, after: number) =>
            before < n && n <= after ? process.kill(process.pid, "SIGKILL") : undefined,
        }),
    ...(inWriteback === undefined
      ? {}
      : {
          atWritebackPoint: (point: WritebackPoint) =>
            point === inWriteback ? process.kill(process.pid, "SIGKILL") : undefined,
        }),
  };
}

/** The flags that name the planner turns' model. */
export type PlannerFlags = { model?: string; "planner-model"?: string };

/**
 * The model of the planner turns (replan obligations): --planner-model first; then the goal file's
 * planner.model; then the builder's --model; then the goal's builder model. --planner-model is checked
 * now, so a bad spec, a missing script or a missing API key is a bad-input error before any turn runs,
 * not an idle goal later. A scripted/replay file is made absolute (every tick reads it from the start).
 */
export function plannerFor(flags: PlannerFlags): { model?: string; builderModel?: string } | undefined {
  const spec = flags["planner-model"];
  if (spec === undefined) return flags.model === undefined ? undefined : { builderModel: flags.model };
  const file = /^(scripted|replay):(.+)$/.exec(spec.trim());
  const model = file ? `${file[1]}:${resolve(file[2] as string)}` : spec.trim();
  try {
    createModel(model);
  } catch (e) {
    if (!(e instanceof LoopgateError)) throw e;
    const where = e instanceof InputError ? e.where : undefined;
    const why = where && e.message.startsWith(`${where}: `) ? e.message.slice(where.length + 2) : e.message;
    const path = file ? resolve(file[2] as string) : "";
    throw new InputError(path && !why.includes(path) ? `${why} (${path})` : why, "--planner-model", {
      cause: e,
    });
  }
  return { model };
}

/** `loopgate goal tick GOAL`: one governed turn, printed phase by phase. */
export async function goalTickCommand(io: CommandIO, goalId: string, flags: TickFlags): Promise<number> {
  const dir = goalStoreDir(flags);
  return guarded(io, flags.json, () =>
    withStore(dir, true, async (store) => {
      const planner = plannerFor(flags);
      const { view } = await openGoal(store, dir, goalId);
      const runFlags: RunFlags = { ...flags, store: dir };
      const runHost: RunHost = (run) =>
        run.resume
          ? resumeRun({
              ...faultInjection(),
              runId: run.runId,
              store,
              storeDir: dir,
              allowEnv: flags["builder-env"] ?? [],
              mounts: flags["builder-mount"] ?? [],
              builder: recordedBuilder(flags),
            })
          : executeRun(
              io,
              run.loaded,
              run.gatesOnly ? noopBuilder() : chosen(run.loaded, runFlags, view.agent, view.sourcePath),
              runFlags,
              {
                goal: run.goal,
                runId: run.runId,
              },
            );
      const say = (line: string) => (flags.json ? io.err(`${line}\n`) : io.out(`${line}\n`));
      const outcome = await tick(
        {
          store,
          storeDir: dir,
          runHost,
          // A planner turn answers with --planner-model, else --model, else the goal's own model.
          ...(planner ? { planner } : {}),
          ...goalFaultInjection(),
        },
        {
          goalId,
          agentId: flags["agent-id"] ?? view.agent.agent_id,
          onProgress: (p) => say(formatProgress(p)),
        },
      );
      if (flags.json) io.out(`${JSON.stringify(outcome, null, 2)}\n`);
      else io.out(`${formatOutcome(outcome)}\n`);
      return tickExitCode(outcome);
    }),
  );
}
