import type { RunMode } from "../../../core/goal/schedule/schedule-step.js";
import { InputError } from "../../../core/kernel/errors.js";
import { openGoal } from "../../../runner/goal/goal-service.js";
import {
  deliverNotifications,
  NOTIFY_LINGER_MS,
  type NotifyDeps,
  notifyingTick,
  notifyLine,
} from "../../../runner/goal/notify/notify-deliver.js";
import { realSleep } from "../../../runner/goal/schedule/goal-loop.js";
import { storeGoals, storeProbe } from "../../../runner/goal/schedule/schedule-probe.js";
import { goalTickFor } from "../../../runner/host/goal-run-host.js";
import { plannerFor } from "../../../runner/host/planner.js";
import type { RunFlags } from "../../../runner/host/run-flags.js";
import { hintCommand, hintsFor, storeLine } from "../../output/hints.js";
import { handleInterrupts } from "../../output/interrupt.js";
import type { CommandIO } from "../../output/io.js";
import { storeHintArg } from "../../output/store-location.js";
import { goalHostDeps } from "../host-kit.js";
import { goalStore, guarded, withStore } from "./goal.js";
import { driveGoalRun, driveScheduler } from "./goal-run-drive.js";

/** The flags of `goal run` and `loopgate scheduler` (with the builder flags of `todo run`). */
export type GoalRunFlags = RunFlags & {
  once?: boolean;
  "until-idle"?: boolean;
  json?: boolean;
  "planner-model"?: string;
};

function modeOf(flags: GoalRunFlags, command: string): RunMode {
  if (flags.once && flags["until-idle"])
    throw new InputError("give --once or --until-idle, not both", command);
  return flags.once ? "once" : flags["until-idle"] ? "until_idle" : "run";
}

/**
 * `loopgate goal run GOAL`: governed turns one at a time until the goal is terminal (0), waiting on a
 * person, stopped or throttled (1), or failing (2); Ctrl-C/SIGTERM stop after the turn in progress (130).
 */
export async function goalRunCommand(io: CommandIO, goalId: string, flags: GoalRunFlags): Promise<number> {
  const mode = modeOf(flags, "loopgate goal run");
  const where = goalStore(flags);
  const dir = where.dir;
  const interrupts = handleInterrupts((sig) =>
    io.err(
      `\nloopgate: ${sig}: finishing the turn in progress, then stopping (press again to quit at once)\n`,
    ),
  );
  try {
    return await guarded(io, flags.json, () => {
      plannerFor(flags); // a bad --planner-model is bad input before the store is even opened
      return withStore(where, false, async (store) => {
        const { view } = await openGoal(store, dir, goalId);
        // Notifications go out after each turn's ACK; what a crashed host left due goes out first, and
        // at the end the retries due within NOTIFY_LINGER_MS are waited for (the rest: the next host).
        const notify = notifyDeps(io, store, dir, where);
        await deliverNotifications(notify, goalId, { signal: interrupts.signal });
        const code = await driveGoalRun(
          io,
          {
            goalId,
            agentId: view.agent.agent_id,
            storeArg: storeHintArg(where).trim(),
            store: storeLine(where),
          },
          { json: flags.json === true, mode },
          {
            tick: notifyingTick(goalTickFor(goalHostDeps(io, store, dir, flags), plannerFor(flags)), notify),
            probe: storeProbe(store, dir),
            sleep: realSleep,
            clock: () => new Date(),
            signal: interrupts.signal,
          },
        );
        await deliverNotifications(notify, goalId, { lingerMs: NOTIFY_LINGER_MS, signal: interrupts.signal });
        return code;
      });
    });
  } finally {
    interrupts.dispose();
  }
}

/** `loopgate scheduler`: every active goal of the store in this process, until SIGINT/SIGTERM (or one pass). */
export async function schedulerCommand(io: CommandIO, flags: GoalRunFlags): Promise<number> {
  if (flags["until-idle"])
    throw new InputError("the scheduler takes --once, not --until-idle", "loopgate scheduler");
  plannerFor(flags);
  const where = goalStore(flags);
  const dir = where.dir;
  const interrupts = handleInterrupts((sig) =>
    io.err(
      `\nloopgate scheduler: ${sig}: finishing the turn in progress, then stopping (press again to quit at once)\n`,
    ),
  );
  try {
    return await withStore(where, false, (store) =>
      driveScheduler(
        io,
        { json: flags.json === true, once: flags.once === true, storeLabel: dir },
        {
          goals: storeGoals(store, dir),
          tick: notifyingTick(
            goalTickFor(goalHostDeps(io, store, dir, flags), plannerFor(flags)),
            notifyDeps(io, store, dir, where),
          ),
          probe: storeProbe(store, dir),
          sleep: realSleep,
          clock: () => new Date(),
          signal: interrupts.signal,
        },
      ),
    );
  } finally {
    interrupts.dispose();
  }
}

/** How a command delivers a goal's notifications: `notify:` lines on stderr, hints naming this store. */
export function notifyDeps(
  io: CommandIO,
  store: NotifyDeps["store"],
  localDir: string,
  where: Parameters<typeof hintsFor>[0],
): NotifyDeps {
  return {
    store,
    localDir,
    cli: (args) => hintCommand(hintsFor(where), args),
    onReport: (r) => io.err(`${notifyLine(r)}\n`),
  };
}
