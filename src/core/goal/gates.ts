import type { GoalState, TodoState } from "./goal-state-shape.js";
import { isResumeCandidate } from "./todo-rules.js";

/**
 * Decision gates: a `user_gate` todo with a `decision_scope` covers the actions that require that scope
 * (`required_decision_scopes`); a `global_gate` covers every action of the goal. An approval satisfies
 * exactly its own scope, nothing else.
 */

/** Where a decision scope stands. */
export type ScopeStatus = "approved" | "pending" | "deferred" | "rejected" | "cancelled" | "missing";

/** The key under which a goal-wide gate is reported. */
export const GLOBAL_SCOPE = "*";

/** The user gates of the goal, in the order they were added. */
export function gateTodos(state: GoalState): TodoState[] {
  return state.order.map((id) => state.todos[id] as TodoState).filter((t) => t.class === "user_gate");
}

function statusOfGates(gates: readonly TodoState[]): ScopeStatus {
  if (gates.length === 0) return "missing";
  if (gates.some((g) => g.decision === "approved")) return "approved";
  if (gates.some((g) => g.status === "open" || g.status === "blocked")) return "pending";
  if (gates.some((g) => g.status === "deferred")) return "deferred";
  if (gates.some((g) => g.decision === "rejected")) return "rejected";
  if (gates.some((g) => g.decision === "cancelled")) return "cancelled";
  // Every gate for the scope was superseded or closed without a decision: nobody decided it.
  return "missing";
}

/** The status of one decision scope: approved if any gate for it was approved. */
export function scopeStatus(state: GoalState, scope: string): ScopeStatus {
  return statusOfGates(gateTodos(state).filter((g) => !g.globalGate && g.decisionScope === scope));
}

/** A scope an action needs and does not have yet. */
export interface ScopeWait {
  scope: string;
  status: Exclude<ScopeStatus, "approved">;
  /** The gate todos that decide it. */
  gates: string[];
}

/**
 * What stands between `todo` and running (or completing): every required scope not approved, and every
 * goal-wide gate not approved. Empty means the decisions it needs are all made.
 */
export function scopeWaits(state: GoalState, todo: TodoState): ScopeWait[] {
  const waits: ScopeWait[] = [];
  const gates = gateTodos(state);
  for (const scope of todo.requiredDecisionScopes) {
    const covering = gates.filter((g) => !g.globalGate && g.decisionScope === scope);
    const status = statusOfGates(covering);
    if (status !== "approved") waits.push({ scope, status, gates: covering.map((g) => g.id) });
  }
  if (todo.class !== "user_gate") {
    for (const g of gates.filter((x) => x.globalGate)) {
      const status = statusOfGates([g]);
      if (status !== "approved" && status !== "missing")
        waits.push({ scope: g.decisionScope ?? GLOBAL_SCOPE, status, gates: [g.id] });
    }
  }
  return waits;
}

/** True when every decision `todo` needs is approved. */
export function decisionsReady(state: GoalState, todo: TodoState): boolean {
  return scopeWaits(state, todo).length === 0;
}

/** A gate waiting on a person, and the todos it holds back. */
export interface PendingGate {
  gateId: string;
  scope: string;
  content: string;
  /** Open todos whose required scopes (or a goal-wide gate) it covers. */
  covers: string[];
  /** A deferred gate whose resume condition holds now: the person is asked again (its status stays deferred). */
  askedAgain: boolean;
}

/** A gate is asked now: open (or blocked), or deferred with its resume condition holding at `now`. */
export function gateAsked(state: GoalState, g: TodoState, now: Date): boolean {
  if (g.class !== "user_gate") return false;
  return g.status === "open" || g.status === "blocked" || isResumeCandidate(state, g, now);
}

/**
 * The user gates asked now, with the work each covers: the open ones, and the deferred ones whose
 * `resume_when` holds at `now` (asked again: a deferral answers "later", and later has come; the status
 * stays deferred until a person decides or defers it again). A deferred gate whose condition does not
 * hold yet is not asked.
 */
export function pendingGates(state: GoalState, now: Date): PendingGate[] {
  const unfinished = state.order
    .map((id) => state.todos[id] as TodoState)
    .filter((t) => t.status !== "done" && t.class !== "user_gate");
  return gateTodos(state)
    .filter((g) => gateAsked(state, g, now))
    .map((g) => ({
      gateId: g.id,
      scope: g.globalGate ? (g.decisionScope ?? GLOBAL_SCOPE) : (g.decisionScope ?? ""),
      content: g.content,
      askedAgain: g.status === "deferred",
      covers: unfinished
        .filter(
          (t) =>
            g.globalGate || (g.decisionScope !== null && t.requiredDecisionScopes.includes(g.decisionScope)),
        )
        .map((t) => t.id),
    }));
}
