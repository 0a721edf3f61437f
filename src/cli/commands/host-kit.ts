import type { GoalHostDeps } from "../../runner/host/goal-run-host.js";
import type { RunFaults, RunFlags, RunKit } from "../../runner/host/run-flags.js";
import type { EventStore } from "../../store/kernel/event-store.js";
import type { CommandIO } from "../output/io.js";
import { chooseBuilder, chosen } from "./choose-builder.js";
import { faultInjection } from "./fault-injection.js";
import { judgeModelFor } from "./judge-model.js";
import { recordedBuilder } from "./resume.js";
import { runSettings } from "./run-settings.js";

// What the CLI gives the hosts of runner/host: how its flags become a run, and the faults its environment asks for.

export { type PlannerFlags, plannerFor } from "../../runner/host/planner.js";

/** How run flags become a run, as `loopgate run`, `resume` and `todo run` read them. */
export function runKit(): RunKit {
  return {
    settings: runSettings,
    builder: chooseBuilder,
    goalBuilder: chosen,
    recorded: (flags, oracle) => recordedBuilder(flags, undefined, undefined, oracle),
    judge: judgeModelFor,
  };
}

/**
 * Kill-point fault injection for the crash tests: with LOOPGATE_FAULT_KILL_AFTER_GOAL_EVENTS=N the
 * process kills itself (SIGKILL) right after the append that brings the goal stream to N events
 * (heartbeats not counted); with LOOPGATE_FAULT_KILL_IN_WRITEBACK=commit_written|ref_moved, inside the
 * writeback (the commit object written; the branch moved, the work tree not yet).
 * LOOPGATE_FAULT_KILL_AFTER_EVENTS=N still kills inside the turn's run (faultInjection, beside this file).
 */
export function hostFaults(): RunFaults {
  const at = process.env.LOOPGATE_FAULT_KILL_AFTER_GOAL_EVENTS;
  const inWriteback = process.env.LOOPGATE_FAULT_KILL_IN_WRITEBACK;
  const n = Number(at);
  return {
    ...faultInjection(),
    ...(at === undefined
      ? {}
      : {
          afterGoalAppend: (before: number, after: number) =>
            before < n && n <= after ? process.kill(process.pid, "SIGKILL") : undefined,
        }),
    ...(inWriteback === undefined
      ? {}
      : {
          atWritebackPoint: (point: string) =>
            point === inWriteback ? process.kill(process.pid, "SIGKILL") : undefined,
        }),
  };
}

/** The goal run host's dependencies for a command of this process: warnings go to stderr. */
export function goalHostDeps(
  io: CommandIO,
  store: EventStore,
  localDir: string,
  flags: RunFlags,
): GoalHostDeps {
  return {
    store,
    localDir,
    flags,
    kit: runKit(),
    faults: hostFaults(),
    warn: (t: string) => io.err(`warning: ${t}\n`),
  };
}
