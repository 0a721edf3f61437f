import { effectRef, type TurnIdentity } from "../../../core/events/goal/turn-events.js";
import type { GoalState } from "../../../core/goal/goal-state-shape.js";
import { obligationId, replanOperation } from "../../../core/goal/replan.js";
import type { TurnState } from "../../../core/goal/turn/turn-state.js";
import {
  executeReplanHost,
  executeReplanWriteback,
  obligationOf,
  openObligation,
  planOf,
  readbackReplanHost,
  readbackReplanWriteback,
  recordReplanTypedResult,
  recordReplanValidation,
  tickPlanner,
} from "./replan-step.js";
import type { TurnKind } from "./turn-kind.js";

/** What a planner turn did: the outcome its operation recorded; a delta is a change. */
function summary(s: GoalState, id: TurnIdentity, t: TurnState) {
  const op = replanOperation(s, effectRef(id, "durable_writeback"));
  return {
    result: `replan ${obligationOf(t)}: ${op?.outcome ?? "nothing recorded"}`,
    changed: op?.outcome === "delta",
  };
}

/** A planner turn on the goal's open replan obligation (replan-step.ts). */
export const replanKind: TurnKind = {
  name: "replan",
  select(ctx) {
    const o = openObligation(ctx.j.state);
    const model = o ? tickPlanner(ctx) : "no open obligation a planner turn answers";
    if (!o || typeof model === "string") return { found: false, why: model as string };
    const oid = obligationId(o);
    return { found: true, work: { kind: "replan", obligation_id: oid }, what: `the planner turn on ${oid}` };
  },
  execute: executeReplanHost,
  readback: (ctx, id, t, phase) =>
    phase === "host_execute" ? readbackReplanHost(ctx, id) : readbackReplanWriteback(ctx, id, t),
  typedResult: (ctx, id) => recordReplanTypedResult(ctx, id),
  validate: (ctx, id) => recordReplanValidation(ctx, id),
  writeback: executeReplanWriteback,
  // The planner model's usage, as kept with its answer.
  usage: async (ctx, id) => (await planOf(ctx, id))?.usage ?? { tokens: 0, cost_usd: 0, turns: 1 },
  summary,
  todoOf: () => null,
};
