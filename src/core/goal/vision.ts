import { GOAL_LIMITS, type GoalEventBody } from "../events/goal/goal-events.js";
import { boundText } from "../kernel/bounded.js";
import { fail } from "./command-checks.js";
import { isActiveVision } from "./goal-state.js";
import type { GoalState, VisionState } from "./goal-state-shape.js";

/**
 * Vision facts: per agent, a bounded route with the checkpoint it was read against; afterwards a
 * bounded patch (which must change the route: a patch that does not is replan_noop) or a
 * vision_unchanged_reason; at its end, retired (nobody follows it on) or superseded (another agent's route
 * replaces it). The obligations they answer are in obligations.ts; closure reads `visionStanding`.
 */
const bound = (s: string | undefined, max: number = GOAL_LIMITS.reason) => boundText(s ?? "", max);

/** The goal commands about the vision (part of GoalCommand in goal-decider.ts). */
export type VisionCommand =
  | { type: "record_vision"; agentId: string; route: string }
  | { type: "patch_vision"; agentId: string; patch: string; route: string; reason: string }
  | { type: "record_vision_unchanged"; agentId: string; reason: string }
  | { type: "retire_vision"; agentId: string; reason: string }
  /** `byAgentId`'s route (recorded now when `route` is given) replaces `agentId`'s. */
  | { type: "supersede_vision"; agentId: string; byAgentId: string; route?: string; reason: string };

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
      if (!isActiveVision(prev))
        fail(
          `patch_vision: agent ${command.agentId} ${prev ? `follows no route (${prev.last})` : "has no vision to patch"}; record one first`,
        );
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
      if (!isActiveVision(prev))
        fail(
          `record_vision_unchanged: agent ${command.agentId} ${prev ? `follows no route (${prev.last})` : "has no vision yet"}; record one first`,
        );
      over("reason", command.reason, GOAL_LIMITS.reason);
      return [
        {
          type: "vision_unchanged_recorded",
          data: { agent_id: command.agentId, reason: command.reason, checkpoint },
        },
      ];
    case "retire_vision":
    case "supersede_vision": {
      const c = command.type;
      if (!isActiveVision(prev))
        fail(
          `${c}: agent ${command.agentId} has no followed vision to end (${prev ? prev.last : "none recorded"})`,
        );
      over("reason", command.reason, GOAL_LIMITS.reason);
      if (command.type === "retire_vision")
        return [
          {
            type: "vision_retired",
            data: { agent_id: command.agentId, reason: command.reason, superseded_by: null, checkpoint },
          },
        ];
      const by = command.byAgentId;
      if (!by.trim() || by === command.agentId)
        fail(
          `${c}: rule superseded_by_another: a route is superseded by another agent's, not by ${by || "nobody"}`,
        );
      const events: GoalEventBody[] = [];
      if (command.route !== undefined) {
        if (isActiveVision(state.visions[by]))
          fail(`${c}: ${by} already follows a route; supersede without --route, or patch ${by}'s`);
        over("route", command.route, GOAL_LIMITS.route);
        events.push({ type: "vision_recorded", data: { agent_id: by, route: command.route, checkpoint } });
      } else if (!isActiveVision(state.visions[by]))
        fail(`${c}: ${by} follows no route yet; give the replacement route (--route)`);
      events.push({
        type: "vision_retired",
        data: { agent_id: command.agentId, reason: command.reason, superseded_by: by, checkpoint },
      });
      return events;
    }
  }
}

/**
 * Where the goal's vision checkpoint stands, for its agent (following superseded routes to their
 * replacement): `fresh` (a followed or retired route read against the current acceptance), `stale` (read
 * against an older acceptance), or `missing` (no route at all). Closure needs `fresh`.
 */
export type VisionStanding =
  | { kind: "fresh" | "stale"; agentId: string; vision: VisionState }
  | { kind: "missing"; agentId: string };

export function visionStanding(state: GoalState): VisionStanding {
  let agentId = state.agent?.agent_id ?? "agent";
  const seen = new Set<string>();
  let v = state.visions[agentId];
  while (v?.last === "superseded" && v.supersededBy !== null && !seen.has(agentId)) {
    seen.add(agentId);
    agentId = v.supersededBy;
    v = state.visions[agentId];
  }
  if (!v || v.last === "superseded") return { kind: "missing", agentId };
  const kind = v.checkpoint.acceptance_version < state.acceptanceVersion ? "stale" : "fresh";
  return { kind, agentId, vision: v };
}
