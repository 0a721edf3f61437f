import { join } from "node:path";
import { noopBuilder } from "../../builders/command-builder.js";
import type { WakeUp } from "../../core/goal/schedule/scheduler.js";
import type { EventStore } from "../../store/kernel/event-store.js";
import { openGoal } from "../goal/goal-service.js";
import { revisionTree } from "../goal/repo/goal-workspace.js";
import { makeTick } from "../goal/turn/tick.js";
import type { RunHost, ScheduleHost, TickDeps } from "../goal/turn/tick-context.js";
import type { Tick } from "../goal/turn/tick-outcome.js";
import { resumeRun } from "../run/resume-run.js";
import { runTask } from "../run/run-task.js";
import { goalFaults, type RunFaults, type RunFlags, type RunKit, runFaults } from "./run-flags.js";

/** What the goal run host is given: how flags become a run, the faults to inject, where warnings go. */
export interface GoalHostDeps {
  store: EventStore;
  /** This host's local folder: run folders, the goal's cache repository. */
  localDir: string;
  flags: RunFlags;
  kit: RunKit;
  faults: RunFaults;
  /** A run's warnings (a builder's, the sandbox's), for the host's user. */
  warn: (text: string) => void;
}

/**
 * The tick `goal run` and `loopgate scheduler` drive: the goal's run host (the todo's task on the goal
 * revision's tree, with the builder the flags name or the goal's own, under the turn's deterministic run
 * id; a run left unfinished by a kill is resumed, never started twice) and this process as the schedule
 * host (it applies each wake-up itself, so the ACK is `host_updated` when the cadence changed, else
 * `host_match`).
 */
export function goalTickFor(
  deps: GoalHostDeps,
  planner: { model?: string; builderModel?: string } | undefined,
  more: Partial<TickDeps> = {},
): Tick {
  let applied: string | null = null;
  const scheduleHost: ScheduleHost = async (wake: WakeUp) => {
    const key = JSON.stringify([wake.action, wake.at]);
    const mode = key === applied ? "host_match" : "host_updated";
    applied = key;
    return mode;
  };
  return makeTick({
    store: deps.store,
    localDir: deps.localDir,
    runHost: goalRunHost(deps),
    scheduleHost,
    ...(planner ? { planner } : {}),
    ...goalFaults(deps.faults),
    ...more,
  });
}

/**
 * The run host of a goal's turns: the todo's task on the revision's tree under the turn's run id, or the
 * run resumed. With a store shared beyond this machine, a resumed run is driven in this host's own run
 * folder (rebuilt from the store when another host started it), never in the folder another host recorded.
 */
export function goalRunHost(
  deps: GoalHostDeps,
  extra: { signal?: AbortSignal; leaseTtlMs?: number } = {},
): RunHost {
  const { store, localDir, flags, kit } = deps;
  const runFlags: RunFlags = { ...flags, store: localDir };
  const shared = store.content !== undefined;
  return async (run) => {
    if (run.resume)
      return resumeRun({
        ...runFaults(deps.faults),
        ...extra,
        ...(shared ? { runDir: join(localDir, "runs", run.runId) } : {}),
        runId: run.runId,
        store,
        localDir,
        startingTree: (g) => revisionTree(localDir, g.id, g.revision),
        allowEnv: flags["builder-env"] ?? [],
        mounts: flags["builder-mount"] ?? [],
        builder: kit.recorded(flags),
      });
    const { view } = await openGoal(store, localDir, run.goal.id);
    const s = kit.settings(run.loaded, runFlags);
    return runTask({
      ...runFaults(deps.faults),
      runId: run.runId,
      loaded: run.loaded,
      builder: run.gatesOnly
        ? noopBuilder()
        : await kit.goalBuilder(run.loaded, runFlags, view.agent, view.sourcePath),
      ...extra,
      store,
      localDir,
      sandbox: s.sandbox,
      allowEnv: flags["builder-env"] ?? [],
      mounts: s.mounts,
      goal: run.goal,
      reporter: { warning: deps.warn },
      ...(flags.network ? { network: true } : {}),
      ...(s.maxAttempts !== undefined ? { maxAttempts: s.maxAttempts } : {}),
      ...(await kit.judge(run.loaded, runFlags)),
    });
  };
}
