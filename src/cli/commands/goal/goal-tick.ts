import { noopBuilder } from "../../../builders/command-builder.js";
import { openGoal } from "../../../runner/goal/goal-service.js";
import { revisionTree } from "../../../runner/goal/repo/goal-workspace.js";
import { tick } from "../../../runner/goal/turn/tick.js";
import type { RunHost } from "../../../runner/goal/turn/tick-context.js";
import {
  encodeTickOutcome,
  type TickOutcome,
  type TickProgress,
} from "../../../runner/goal/turn/tick-outcome.js";
import { goalRunHost } from "../../../runner/host/goal-run-host.js";
import { plannerFor } from "../../../runner/host/planner.js";
import { goalFaults } from "../../../runner/host/run-flags.js";
import { resumeRun } from "../../../runner/run/resume-run.js";
import type { CommandIO } from "../../output/io.js";
import { chosen } from "../choose-builder.js";
import { goalHostDeps, hostFaults } from "../host-kit.js";
import { goalStore, guarded, withStore } from "./goal.js";

export { type PlannerFlags, plannerFor } from "../../../runner/host/planner.js";

import type { RunFlags } from "../../../runner/host/run-flags.js";
import { executeRun } from "../execute-run.js";
import { faultInjection } from "../fault-injection.js";
import { recordedBuilder } from "../resume.js";

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
        // The turn's own settlement closed the goal: it is done, as a later tick's `terminal` says.
        return o.wake.terminal
          ? `advanced: ${o.result}\nterminal: the goal is closed (${o.wake.why})`
          : `advanced: ${o.result}`;
      case "idle":
        return `idle: ${o.reason}`;
      case "waiting_person":
        return `waiting on ${o.who}: gate ${o.gateId}`;
      case "throttled":
        return `throttled: ${o.reason}`;
      case "terminal":
        return `terminal: ${o.closure}`;
      case "stopped":
        return `stopped: ${o.reason}`;
      case "busy":
        return `busy: turn in progress by ${o.holder} until ${o.expiresAt}`;
      case "failed":
        return `failed (${o.code}): ${o.detail}`;
    }
  })();
  return `${what}\n${wake}`;
}

/** `loopgate goal tick GOAL`: one governed turn, printed phase by phase. */
export async function goalTickCommand(io: CommandIO, goalId: string, flags: TickFlags): Promise<number> {
  const where = goalStore(flags);
  const dir = where.dir;
  return guarded(io, flags.json, () =>
    withStore(where, true, async (store) => {
      const planner = plannerFor(flags);
      const { view } = await openGoal(store, dir, goalId);
      const runFlags: RunFlags = { ...flags, store: dir };
      // On a shared store the runs go through the store given (a folder's `goal tick` keeps executeRun's output).
      const runHost: RunHost =
        where.kind === "postgres"
          ? goalRunHost(goalHostDeps(io, store, dir, flags))
          : async (run) =>
              run.resume
                ? resumeRun({
                    ...faultInjection(),
                    runId: run.runId,
                    store,
                    localDir: dir,
                    startingTree: (g) => revisionTree(dir, g.id, g.revision),
                    allowEnv: flags["builder-env"] ?? [],
                    mounts: flags["builder-mount"] ?? [],
                    builder: recordedBuilder(flags),
                  })
                : executeRun(
                    io,
                    run.loaded,
                    run.gatesOnly
                      ? noopBuilder()
                      : await chosen(run.loaded, runFlags, view.agent, view.sourcePath),
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
          localDir: dir,
          runHost,
          // A planner turn answers with --planner-model, else --model, else the goal's own model.
          ...(planner ? { planner } : {}),
          ...goalFaults(hostFaults()),
        },
        {
          goalId,
          agentId: flags["agent-id"] ?? view.agent.agent_id,
          onProgress: (p) => say(formatProgress(p)),
        },
      );
      if (flags.json) io.out(`${JSON.stringify(encodeTickOutcome(outcome), null, 2)}\n`);
      else io.out(`${formatOutcome(outcome)}\n`);
      return tickExitCode(outcome);
    }),
  );
}
