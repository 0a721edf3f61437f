import { noopBuilder } from "../../builders/command-builder.js";
import type { WakeUp } from "../../core/goal/turn/index.js";
import { openGoal } from "../../runner/goal/goal-service.js";
import { makeTick } from "../../runner/goal/turn/tick.js";
import type { RunHost, ScheduleHost } from "../../runner/goal/turn/tick-context.js";
import type { Tick } from "../../runner/goal/turn/tick-outcome.js";
import { resumeRun } from "../../runner/resume-run.js";
import { runTask } from "../../runner/run-task.js";
import type { EventStore } from "../../store/event-store.js";
import type { CommandIO } from "../io.js";
import { goalFaultInjection, type PlannerFlags, plannerFor } from "./goal-tick.js";
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
): Tick {
  const planner = plannerFor(flags);
  const runFlags: RunFlags = { ...flags, store: storeDir };
  const runHost: RunHost = async (run) => {
    if (run.resume)
      return resumeRun({
        ...faultInjection(),
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
    runHost,
    scheduleHost,
    ...(planner ? { planner } : {}),
    ...goalFaultInjection(),
  });
}
