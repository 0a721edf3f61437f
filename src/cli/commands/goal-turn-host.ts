import { join, resolve } from "node:path";
import { createModel } from "../../agent/models/provider.js";
import { noopBuilder } from "../../builders/command-builder.js";
import { InputError, LoopgateError } from "../../core/errors.js";
import type { WakeUp } from "../../core/goal/turn/index.js";
import { openGoal } from "../../runner/goal/goal-service.js";
import type { AfterGoalAppend } from "../../runner/goal/turn/goal-journal.js";
import { makeTick } from "../../runner/goal/turn/tick.js";
import type { RunHost, ScheduleHost, TickDeps } from "../../runner/goal/turn/tick-context.js";
import type { Tick } from "../../runner/goal/turn/tick-outcome.js";
import type { WritebackPoint } from "../../runner/goal/turn/writeback.js";
import { resumeRun } from "../../runner/resume-run.js";
import { runTask } from "../../runner/run-task.js";
import type { EventStore } from "../../store/event-store.js";
import type { CommandIO } from "../io.js";
import { chosen } from "./goal-todo-run.js";
import { recordedBuilder } from "./resume.js";
import { faultInjection, judgeModelFor, type RunFlags, runSettings } from "./run-common.js";

/**
 * The tick `goal run` and `loopgate scheduler` drive: the goal's run host (the todo's task on the goal
 * revision's tree, with the builder the flags name or the goal's own, under the turn's deterministic run
 * id; a run left unfinished by a kill is resumed, never started twice) and this process as the schedule
 * host (it applies each wake-up itself, so the ACK is `host_updated` when the cadence changed, else
 * `host_match`).
 */
export function goalTickFor(
  io: CommandIO,
  store: EventStore,
  storeDir: string,
  flags: RunFlags & PlannerFlags,
  more: Partial<TickDeps> = {},
): Tick {
  const planner = plannerFor(flags);
  let applied: string | null = null;
  const scheduleHost: ScheduleHost = async (wake: WakeUp) => {
    const key = JSON.stringify([wake.action, wake.at]);
    const mode = key === applied ? "host_match" : "host_updated";
    applied = key;
    return mode;
  };
  return makeTick({
    store,
    storeDir,
    runHost: goalRunHost(io, store, storeDir, flags),
    scheduleHost,
    ...(planner ? { planner } : {}),
    ...goalFaultInjection(),
    ...more,
  });
}

/**
 * The run host of a goal's turns: the todo's task on the revision's tree under the turn's run id, or the
 * run resumed. With a store shared beyond this machine, a resumed run is driven in this host's own run
 * folder (rebuilt from the store when another host started it), never in the folder another host recorded.
 */
export function goalRunHost(
  io: CommandIO,
  store: EventStore,
  storeDir: string,
  flags: RunFlags,
  extra: { signal?: AbortSignal; leaseTtlMs?: number } = {},
): RunHost {
  const runFlags: RunFlags = { ...flags, store: storeDir };
  const shared = store.content !== undefined;
  return async (run) => {
    if (run.resume)
      return resumeRun({
        ...faultInjection(),
        ...extra,
        ...(shared ? { runDir: join(storeDir, "runs", run.runId) } : {}),
        runId: run.runId,
        store,
        storeDir,
        allowEnv: flags["builder-env"] ?? [],
        mounts: flags["builder-mount"] ?? [],
        builder: recordedBuilder(flags),
      });
    const { view } = await openGoal(store, storeDir, run.goal.id);
    const s = runSettings(run.loaded, runFlags);
    return runTask({
      ...faultInjection(),
      runId: run.runId,
      loaded: run.loaded,
      builder: run.gatesOnly ? noopBuilder() : chosen(run.loaded, runFlags, view.agent, view.sourcePath),
      ...extra,
      store,
      storeDir,
      sandbox: s.sandbox,
      allowEnv: flags["builder-env"] ?? [],
      mounts: s.mounts,
      goal: run.goal,
      reporter: { warning: (t: string) => io.err(`warning: ${t}\n`) },
      ...(flags.network ? { network: true } : {}),
      ...(s.maxAttempts !== undefined ? { maxAttempts: s.maxAttempts } : {}),
      ...judgeModelFor(run.loaded, runFlags),
    });
  };
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
