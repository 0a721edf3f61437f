import type { GoalEventBody } from "../../../core/events/goal/goal-events.js";
import { effectRef, type TurnIdentity } from "../../../core/events/goal/turn-events.js";
import type { GoalState } from "../../../core/goal/goal-state-shape.js";
import type { TurnState } from "../../../core/goal/turn/turn-state.js";
import { type TickCtx, turnDecision } from "./tick-context.js";

/**
 * The writeback of a turn whose effect is goal events under the turn's operation id (a monitor's poll, a
 * planner's answer): the prepared fact, then the events and the accepted writeback in ONE goal append. The
 * revision does not move (no git commit), so the writeback's commit is the base. Events the goal refuses
 * (the function throws) are a rejected writeback, and nothing of them is written.
 */
export interface GoalOperation {
  /** What the operation is, for messages: "observation", "answer". */
  noun: string;
  /** The goal events the operation decides on `s` under operation id `ref`; throws when the goal refuses them. */
  events(s: GoalState, ref: string): GoalEventBody[];
  /** The progress line for the written events' types. */
  detail(types: string, ref: string): string;
}

export async function writeGoalOperation(
  ctx: TickCtx,
  id: TurnIdentity,
  t: TurnState,
  op: GoalOperation,
): Promise<void> {
  const ref = effectRef(id, "durable_writeback");
  const base = t.baseRevision ?? "";
  await ctx.j.append(
    turnDecision({ type: "prepare_effect", identity: id, phase: "durable_writeback", effectRef: ref }),
  );
  await ctx.j.append((s) => {
    let goal: GoalEventBody[];
    try {
      goal = op.events(s, ref);
    } catch (e) {
      return turnDecision({
        type: "record_writeback",
        identity: id,
        effectRef: ref,
        outcome: { kind: "rejected", reason: `the goal refuses the ${op.noun}: ${(e as Error).message}` },
      })(s);
    }
    ctx.progress({ phase: "durable_writeback", detail: op.detail(goal.map((e) => e.type).join(", "), ref) });
    return [
      ...turnDecision({
        type: "record_writeback",
        identity: id,
        effectRef: ref,
        outcome: { kind: "accepted", commit: base, newRevision: base },
      })(s),
      ...goal,
    ];
  });
}

/** What a readback of an operation found: committed → reuse, absent → write, unknown → fail closed. */
export type OperationFound =
  | { found: "committed" }
  | { found: "absent" }
  | { found: "unknown"; reason: string };

/** The readback of an operation that is either recorded or not (a monitor's poll, a planner's answer). */
export const presence = (present: boolean): OperationFound =>
  present ? { found: "committed" } : { found: "absent" };

/** A prepared operation writeback not settled: the readback of what the goal stream holds under the operation id. */
export async function readbackGoalOperation(
  ctx: TickCtx,
  id: TurnIdentity,
  t: TurnState,
  look: (s: GoalState, ref: string) => { found: OperationFound; detail: string },
): Promise<void> {
  const ref = effectRef(id, "durable_writeback");
  const base = t.baseRevision ?? "";
  const { found, detail } = look(ctx.j.state, ref);
  ctx.progress({ phase: "readback", detail });
  await ctx.j.append(
    turnDecision({
      type: "resolve_readback",
      identity: id,
      phase: "durable_writeback",
      effectRef: ref,
      readback:
        found.found === "committed"
          ? { found: "committed", payload: { phase: "durable_writeback", commit: base, newRevision: base } }
          : found,
    }),
  );
}
