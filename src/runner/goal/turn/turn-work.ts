import type { EffectPhase, TurnIdentity } from "../../../core/events/goal/turn-events.js";
import type { GoalState } from "../../../core/goal/goal-state-shape.js";
import type { TurnState } from "../../../core/goal/turn/turn-state.js";
import { kindOfTurn } from "./kind-registry.js";
import { recordSpend } from "./settle-step.js";
import type { TickCtx } from "./tick-context.js";

/**
 * A turn's phases, each handed to the turn's kind (kind-registry.ts): the tick says which phase is next
 * (the turn decider), the kind says how its work carries it out. The skeleton is the same for every kind:
 * an effect phase is executed the first time and resolved by readback when it was prepared and not
 * settled; the spend is charged here, with the usage the kind reports.
 */
export async function effectStep(
  ctx: TickCtx,
  id: TurnIdentity,
  t: TurnState,
  phase: EffectPhase,
  readback: boolean,
): Promise<void> {
  const kind = kindOfTurn(ctx.j.state, t);
  if (readback) return kind.readback(ctx, id, t, phase);
  return phase === "host_execute" ? kind.execute(ctx, id, t) : kind.writeback(ctx, id, t);
}

/** typed_result, validation and quota_spend: facts recorded from what the effect left. */
export async function recordStep(
  ctx: TickCtx,
  id: TurnIdentity,
  t: TurnState,
  phase: "typed_result" | "validation" | "quota_spend",
): Promise<void> {
  const kind = kindOfTurn(ctx.j.state, t);
  if (phase === "quota_spend") return recordSpend(ctx, id, await kind.usage(ctx, id, t));
  return phase === "typed_result" ? kind.typedResult(ctx, id, t) : kind.validate(ctx, id, t);
}

/** What a settled turn did, for the tick's outcome. */
export function turnSummary(
  ctx: TickCtx,
  id: TurnIdentity,
  t: TurnState,
): { result: string; changed: boolean } {
  return kindOfTurn(ctx.j.state, t).summary(ctx.j.state, id, t);
}

/** The todo a progress line of turn `t` names (null: none, or no turn bound). */
export function progressTodo(s: GoalState, t: TurnState | null): string | null {
  return t?.work ? kindOfTurn(s, t).todoOf(t.work) : null;
}
