import type { GoalState, TodoState } from "./goal-state-shape.js";

/**
 * Handoff states, derived from todo relations (never written): where a blocker relation stands and
 * where work routes next. Repairing `cleared_without_successor` means adding a successor, reopening
 * work or recording no_followup, never editing this value.
 */
export const HANDOFF_STATES = [
  "blocking",
  "cleared_with_successor",
  "cleared_without_successor",
  "cleared_no_followup",
  "superseded",
  "deferred",
] as const;
export type HandoffState = (typeof HANDOFF_STATES)[number];

/** One relation: a blocker (class `blocker`, or any todo with `unblocks_todo_id`) and what it hands to. */
export interface Handoff {
  todoId: string;
  /** The todo it unblocks, if it names one. */
  target: string | null;
  state: HandoffState;
  /** Where work routes once cleared: its successors and its target. */
  routesTo: string[];
}

/** True when a todo is a handoff relation's source. */
export function isHandoffSource(todo: TodoState): boolean {
  return todo.class === "blocker" || todo.unblocksTodoId !== null;
}

/** The handoff state of one relation source. */
export function handoffState(todo: TodoState): HandoffState {
  if (todo.note === "superseded") return "superseded";
  if (todo.status === "deferred") return "deferred";
  if (todo.status !== "done") return "blocking";
  // A blocker accepted as the terminal outcome ends the relation with no follow-up on purpose.
  if (todo.noFollowup || todo.attestation?.outcome === "blocker_accepted") return "cleared_no_followup";
  return todo.successors.length > 0 || todo.unblocksTodoId !== null
    ? "cleared_with_successor"
    : "cleared_without_successor";
}

/** Every handoff relation of the goal, in todo order. */
export function handoffs(state: GoalState): Handoff[] {
  return state.order
    .map((id) => state.todos[id] as TodoState)
    .filter(isHandoffSource)
    .map((t) => ({
      todoId: t.id,
      target: t.unblocksTodoId,
      state: handoffState(t),
      routesTo: [...t.successors, ...(t.unblocksTodoId ? [t.unblocksTodoId] : [])],
    }));
}

/** The blockers still holding `todoId` back (their relation is blocking or deferred, or accepted as terminal). */
export function heldBackBy(state: GoalState, todoId: string): string[] {
  const accepted = (id: string) => state.todos[id]?.attestation?.outcome === "blocker_accepted";
  return handoffs(state)
    .filter(
      (h) => h.target === todoId && (h.state === "blocking" || h.state === "deferred" || accepted(h.todoId)),
    )
    .map((h) => h.todoId);
}
