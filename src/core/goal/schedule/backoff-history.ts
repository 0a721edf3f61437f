import { type GoalEventBody, isGoalEventType } from "../../events/goal/goal-events.js";
import type { TurnIdentity, TurnWork } from "../../events/goal/turn-events.js";
import { type InteractionContract, interactionContract } from "../contract.js";
import { evolve } from "../goal-state.js";
import { type GoalState, initialState } from "../goal-state-shape.js";
import {
  type BackoffPolicy,
  type BackoffState,
  type ContractView,
  contractIdentity,
  contractView,
  DEFAULT_BACKOFF,
  nextBackoff,
} from "./scheduler.js";

/**
 * Backoff, derived from the recorded turns, never stored: the goal stream holds every
 * turn's facts, so any host (`goal run`, `loopgate scheduler`, a worker, a restarted process) computes
 * the same backoff from the same log. A turn counts when it settled (acked, released or failed) or a
 * later turn was bound; the one in progress does not.
 */
export interface TurnSummary {
  turnInstanceId: string;
  work: TurnWork;
  /** contractIdentity of the contract the turn was bound under (selected todo, runtime state, gate set). */
  identity: string;
  /** The turn's accepted writeback changed the goal (a commit, an observation, a plan delta). */
  changed: boolean;
  /** The reset token when the turn was bound: the revision of the last person's write before it. */
  resetToken: string | null;
}

/** A goal-stream event as the store returns it (only what the history reads). */
export interface StreamEvent {
  type: string;
  data: unknown;
  revision?: number;
  meta?: { at?: string; origin?: string };
}

const SETTLED = new Set(["turn_scheduler_acked", "turn_released", "turn_failed"]);

function turnData(e: StreamEvent): { identity: TurnIdentity; work?: TurnWork } | null {
  if (!e.type.startsWith("turn_")) return null;
  const d = e.data as { identity?: TurnIdentity; work?: TurnWork } | null;
  return d?.identity && typeof d.identity.turn_instance_id === "string"
    ? (d as { identity: TurnIdentity; work?: TurnWork })
    : null;
}

/** The reset token: any write by a person (a gate decision, a resume, a reopen) resets the cadence. */
export function resetTokenOf(e: StreamEvent, index: number): string | null {
  return e.meta?.origin === "operator" ? `r${e.revision ?? index}` : null;
}

/**
 * The identity the scheduler keys backoff by, of the contract a turn was bound under (health: none
 * observed, as a bound turn needs): its runtime state and gate set, and the todo the turn is bound to.
 */
export function identityAt(state: GoalState, now: Date, work: TurnWork): string {
  const view = contractView(interactionContract(state, { now, health: [] }));
  return contractIdentity(work.kind === "todo" ? { ...view, selectedTodo: work.todo_id } : view);
}

/** Every recorded turn of a goal stream, in the order they were bound. */
export function turnHistory(events: readonly StreamEvent[]): TurnSummary[] {
  let state = initialState();
  let reset: string | null = null;
  const turns = new Map<string, TurnSummary & { settled: boolean }>();
  let last: string | null = null;
  events.forEach((e, i) => {
    const t = turnData(e);
    if (e.type === "turn_bound" && t?.work && !turns.has(t.identity.turn_instance_id)) {
      const at = new Date(e.meta?.at ?? 0);
      if (last) {
        const prev = turns.get(last);
        if (prev) prev.settled = true;
      }
      last = t.identity.turn_instance_id;
      turns.set(last, {
        turnInstanceId: last,
        work: t.work,
        identity: identityAt(state, at, t.work),
        changed: false,
        resetToken: reset,
        settled: false,
      });
    } else if (t) {
      const turn = turns.get(t.identity.turn_instance_id);
      if (turn && e.type === "turn_writeback_accepted") turn.changed = true;
      if (turn && SETTLED.has(e.type)) turn.settled = true;
    }
    reset = resetTokenOf(e, i) ?? reset;
    if (isGoalEventType(e.type)) state = evolve(state, e as unknown as GoalEventBody);
  });
  return [...turns.values()].filter((t) => t.settled).map(({ settled: _s, ...t }) => t);
}

/** The backoff after these turns: nextBackoff folded over them in order. */
export function backoffOf(
  turns: readonly TurnSummary[],
  policy: BackoffPolicy = DEFAULT_BACKOFF,
): BackoffState | null {
  return turns.reduce<BackoffState | null>((b, t) => nextBackoff(b, t, policy), null);
}

/** What the scheduler reads of a goal now: the contract view and the backoff that applies to it. */
export interface ScheduleView {
  view: ContractView;
  /** Null when nothing backs off: no settled turn, or a person wrote since (a new reset token). */
  backoff: BackoffState | null;
  identity: string;
}

/**
 * The schedule view of a goal stream at `now` under `contract` (computed by the caller with the observed
 * health): the recorded turns' backoff, dropped when a person's write came after it (resetToken).
 */
export function scheduleView(
  events: readonly StreamEvent[],
  contract: InteractionContract,
  policy: BackoffPolicy = DEFAULT_BACKOFF,
): ScheduleView {
  const view = contractView(contract);
  let reset: string | null = null;
  events.forEach((e, i) => {
    reset = resetTokenOf(e, i) ?? reset;
  });
  const b = backoffOf(turnHistory(events), policy);
  return {
    view,
    identity: contractIdentity(view),
    backoff: b && b.resetToken === reset ? b : null,
  };
}
