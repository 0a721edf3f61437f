import { isActiveVision } from "../../../core/goal/goal-state.js";
import { obligationId, type ReplanAnswer } from "../../../core/goal/replan.js";
import { assess } from "../../../core/goal/runtime-state.js";
import { visionStanding } from "../../../core/goal/vision.js";
import { InputError } from "../../../core/kernel/errors.js";
import { goalState } from "../../../runner/goal/goal-engine.js";
import { openGoal, writeGoal } from "../../../runner/goal/goal-service.js";
import type { CommandIO } from "../../output/io.js";
import { expectedRevision, goalStore, guarded, printWrite, withStore } from "./goal.js";
import { actorOf } from "./goal-actor.js";
import { specFromFlags, type TodoFlags } from "./goal-todo.js";

/**
 * `loopgate goal vision show|record|patch|unchanged|close|retire|supersede GOAL [NEW_TODO]`: the operator's
 * answer to a replan obligation, under the same real-delta rule as a planner turn: record is the first route
 * (a missing checkpoint), a patch needs a todo with it, closing needs a successor, and nothing at all is
 * refused here (an operator has nothing to record). retire ends the route (nobody follows it on);
 * supersede hands it to another agent's route (--by AGENT, with --route when that agent has none yet).
 */
export interface VisionFlags extends TodoFlags {
  route?: string;
  patch?: string;
  by?: string;
}

export type VisionVerb = "show" | "record" | "patch" | "unchanged" | "close" | "retire" | "supersede";

const must = (v: string | undefined, flag: string, verb: string) => {
  if (v === undefined || !v.trim()) throw new InputError(`loopgate goal vision ${verb} needs ${flag}`, flag);
  return v;
};

export async function goalVisionCommand(
  io: CommandIO,
  verb: VisionVerb,
  goalId: string,
  todoId: string | undefined,
  flags: VisionFlags,
): Promise<number> {
  const where = goalStore(flags);
  const dir = where.dir;
  if (verb === "show") return withStore(where, "read", (store) => show(io, store, dir, goalId, flags));
  const writer = actorOf(flags);
  return guarded(io, flags.json, () =>
    withStore(where, false, async (store) => {
      const read = await openGoal(store, dir, goalId);
      const state = goalState(read.log.events);
      const agent = state.agent?.agent_id ?? "agent";
      const owed = assess(state, {
        now: read.facts.now,
        health: read.facts.health,
      }).obligations;
      const replan = owed.find((o) => o.kind !== "closeout");
      const name = `goal vision ${verb}`;
      if (verb === "retire" || verb === "supersede") {
        const reason = must(flags.reason, "--reason TEXT", verb);
        const command =
          verb === "retire"
            ? ({ type: "retire_vision", agentId: agent, reason } as const)
            : ({
                type: "supersede_vision",
                agentId: agent,
                byAgentId: must(flags.by, "--by AGENT", verb),
                reason,
                ...(flags.route !== undefined ? { route: flags.route } : {}),
              } as const);
        const r = await writeGoal(
          store,
          dir,
          goalId,
          { kind: "command", command },
          expectedRevision(flags) ?? read.log.revision,
          writer,
        );
        printWrite(
          io,
          flags,
          goalId,
          r,
          verb === "retire"
            ? `the route of ${agent} is retired`
            : `the route of ${agent} is superseded by ${flags.by}'s`,
        );
        return 0;
      }
      if (verb === "record" && isActiveVision(state.visions[agent]))
        throw new InputError(
          `agent ${agent} already follows a route; change it with goal vision patch (with a todo), or say it holds with goal vision unchanged`,
          "goal vision record",
        );
      const todos = todoId ? [{ todo: specFromFlags(todoId, flags, name) }] : [];
      const reason =
        verb === "record"
          ? (flags.reason ?? "the route the goal follows")
          : must(flags.reason, "--reason TEXT", verb);
      const vision: ReplanAnswer["vision"] =
        verb === "patch" || verb === "record"
          ? {
              kind: "patch",
              route: must(flags.route, "--route TEXT", verb),
              patch: verb === "record" ? "the first route" : must(flags.patch, "--patch TEXT", verb),
              reason,
            }
          : { kind: verb, reason };
      const answer: ReplanAnswer = {
        agent_id: agent,
        obligation: replan ? obligationId(replan) : "operator",
        vision,
        ...(todos.length ? { todos } : {}),
      };
      const r = await writeGoal(
        store,
        dir,
        goalId,
        { kind: "command", command: { type: "answer_replan", answer } },
        expectedRevision(flags) ?? read.log.revision,
        writer,
      );
      const what =
        verb === "record"
          ? `the route of ${agent} is recorded${todoId ? `, with ${todoId}` : ""}`
          : verb === "patch"
            ? `the route of ${agent} is patched${todoId ? `, with ${todoId}` : ""}`
            : verb === "close"
              ? `the stage of ${agent}'s vision is closed; ${todoId} follows`
              : `the route of ${agent} holds${todoId ? `, with ${todoId}` : ""}`;
      printWrite(io, flags, goalId, r, what);
      return 0;
    }),
  );
}

async function show(
  io: CommandIO,
  store: Parameters<typeof openGoal>[0],
  dir: string,
  goalId: string,
  flags: VisionFlags,
): Promise<number> {
  const read = await openGoal(store, dir, goalId);
  const state = goalState(read.log.events);
  const owed = assess(state, { now: read.facts.now, health: read.facts.health }).obligations;
  const visions = Object.values(state.visions).map((v) => ({
    agent_id: v.agentId,
    route: v.route,
    last: v.last,
    superseded_by: v.supersededBy,
    checkpoint: v.checkpoint,
    stale: v.checkpoint.acceptance_version < state.acceptanceVersion,
  }));
  const standing = visionStanding(state);
  const obligations = owed
    .filter((o) => o.kind !== "closeout")
    .map((o) => ({ id: obligationId(o), detail: o.detail }));
  const noops = state.replanNoops.map((n) => ({ agent_id: n.agentId, obligation: n.obligation }));
  if (flags.json) {
    io.out(
      `${JSON.stringify({ goal: goalId, acceptance_version: state.acceptanceVersion, checkpoint: { agent_id: standing.agentId, standing: standing.kind }, visions, obligations, replan_noops: noops })}\n`,
    );
    return 0;
  }
  const lines = [
    `goal ${goalId} (acceptance version ${state.acceptanceVersion}): the checkpoint closure reads (agent ${standing.agentId}) is ${standing.kind}`,
  ];
  if (!visions.length) lines.push("no vision recorded yet (goal vision record records the first route)");
  for (const v of visions)
    lines.push(
      `vision of ${v.agent_id} (${v.last}${v.superseded_by ? ` by ${v.superseded_by}` : ""}${v.stale ? ", STALE: read against an older acceptance" : ""}, revision ${v.checkpoint.goal_revision.slice(0, 12)}):`,
      ...v.route.split("\n").map((l) => `  ${l}`),
    );
  lines.push(obligations.length ? "replan obligations:" : "no replan obligation is open");
  for (const o of obligations) lines.push(`  ${o.id}: ${o.detail}`);
  if (noops.length) lines.push(`replan_noop answers recorded: ${noops.length} (they cleared nothing)`);
  io.out(`${lines.join("\n")}\n`);
  return 0;
}
