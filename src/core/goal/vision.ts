import { GOAL_LIMITS, type GoalEventBody } from "../events/goal/goal-events.js";
import { boundText } from "../kernel/bounded.js";
import { fail } from "./command-checks.js";
import type { GoalState } from "./goal-state-shape.js";

/**
 * Vision facts: per agent, a bounded route with the checkpoint it was read against; afterwards a
 * bounded patch (which must change the route: a patch that does not is replan_noop) or a
 * vision_unchanged_reason. The obligations they answer are in obligations.ts.
 */
const bound = (s: string | undefined, max: number = GOAL_LIMITS.reason) => boundText(s ?? "", max);

/** The goal commands about the vision (part of GoalCommand in goal-decider.ts). */
export type VisionCommand =
  | { type: "record_vision"; agentId: string; route: string }
  | { type: "patch_vision"; agentId: string; patch: string; route: string; reason: string }
  | { type: "record_vision_unchanged"; agentId: string; reason: string };

export function decideVision(command: VisionCommand, state: GoalState): GoalEventBody[] {
  const checkpoint = { goal_revision: state.revision, acceptance_version: state.acceptanceVersion };
  const over = (what: string, s: string, max: number) => {
    if (!s.trim()) fail(`${command.type}: the ${what} is empty`);
    if (s.length > max)
      fail(`${command.type}: rule vision_bounded: the ${what} is ${s.length} characters; at most ${max}`);
  };
  const prev = state.visions[command.agentId];
  switch (command.type) {
    case "record_vision":
      over("route", command.route, GOAL_LIMITS.route);
      return [
        { type: "vision_recorded", data: { agent_id: command.agentId, route: command.route, checkpoint } },
      ];
    case "patch_vision":
      if (!prev) fail(`patch_vision: agent ${command.agentId} has no vision to patch; record one first`);
      over("patch", command.patch, GOAL_LIMITS.patch);
      over("route", command.route, GOAL_LIMITS.route);
      if (command.route === prev?.route)
        fail(
          "patch_vision: rule replan_noop: the patched route equals the current one; record vision_unchanged_reason instead",
        );
      return [
        {
          type: "vision_patched",
          data: {
            agent_id: command.agentId,
            patch: command.patch,
            route: command.route,
            reason: bound(command.reason),
            checkpoint,
          },
        },
      ];
    case "record_vision_unchanged":
      if (!prev)
        fail(`record_vision_unchanged: agent ${command.agentId} has no vision yet; record one first`);
      over("reason", command.reason, GOAL_LIMITS.reason);
      return [
        {
          type: "vision_unchanged_recorded",
          data: { agent_id: command.agentId, reason: command.reason, checkpoint },
        },
      ];
  }
}
