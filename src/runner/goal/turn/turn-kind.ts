import type { EffectPhase, TurnIdentity, TurnWork, Usage } from "../../../core/events/goal/turn-events.js";
import type { InteractionContract } from "../../../core/goal/contract.js";
import type { GoalState } from "../../../core/goal/goal-state-shape.js";
import type { TurnKindName } from "../../../core/goal/turn/turn-kinds.js";
import type { TurnState } from "../../../core/goal/turn/turn-state.js";
import type { TickCtx } from "./tick-context.js";

/**
 * What `select` found: the work a new turn binds to (`what` names the turn for a throttled message),
 * or why there is none of this kind now.
 */
export type Selection = { found: true; work: TurnWork; what: string } | { found: false; why: string };

/**
 * One kind of governed turn (a todo's run, a monitor's poll, a planner's replan, an acceptance check)
 * as the tick settles it: the same skeleton of phases for every kind (docs/architecture.md,
 * "Vocabulary"), each phase a method that records its own fact. The tick reads the phase from the
 * turn decider and calls the kind's method; the kind never decides the order.
 */
export interface TurnKind {
  readonly name: TurnKindName;
  /** Is there work of this kind on the contract now, and which. Records nothing. */
  select(ctx: TickCtx, contract: InteractionContract): Selection;
  /**
   * host_execute, first time: the bounded effect, journaled as prepared before it runs; or the turn given
   * back (released) when the contract no longer holds its work.
   */
  execute(ctx: TickCtx, id: TurnIdentity, t: TurnState): Promise<void>;
  /**
   * A prepared effect (host_execute or durable_writeback) not settled, as after a crash: looked up in the
   * world and resolved committed (reuse), absent (do it again) or unknown (fail closed: blocked_health).
   */
  readback(ctx: TickCtx, id: TurnIdentity, t: TurnState, phase: EffectPhase): Promise<void>;
  /** typed_result: what the host carried out, from loopgate's own record of the effect. */
  typedResult(ctx: TickCtx, id: TurnIdentity, t: TurnState): Promise<void>;
  /** validation: the receipt that lets the writeback happen, or none (nothing is written back). */
  validate(ctx: TickCtx, id: TurnIdentity, t: TurnState): Promise<void>;
  /** durable_writeback, first time: the journaled prepare, then the effect and its fact. */
  writeback(ctx: TickCtx, id: TurnIdentity, t: TurnState): Promise<void>;
  /** What the turn's quota_spend charges. */
  usage(ctx: TickCtx, id: TurnIdentity, t: TurnState): Promise<Usage>;
  /** What a settled turn did: the one line the CLI prints, and whether the goal changed. */
  summary(s: GoalState, id: TurnIdentity, t: TurnState): { result: string; changed: boolean };
  /** The todo the turn's progress lines name (a todo's run, a monitor's poll), or null. */
  todoOf(work: TurnWork): string | null;
}
