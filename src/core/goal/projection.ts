import type { GoalEventBody } from "../events/goal/goal-events.js";
import { TODO_CLASSES, TODO_STATUSES, type TodoClass, type TodoStatus } from "../events/goal/goal-events.js";
import type { BudgetUsage } from "./budget.js";
import { type Closure, type FrontierGap, terminalClosure } from "./closure.js";
import { gateTodos, type ScopeStatus, scopeStatus } from "./gates.js";
import { evolve } from "./goal-state.js";
import { type GoalState, initialState, type TodoState } from "./goal-state-shape.js";
import { type Handoff, handoffs } from "./handoff.js";
import { type AcceptanceStatus, acceptanceReport } from "./obligations.js";
import { assess, type GoalContext, type RuntimeState } from "./runtime-state.js";
import { isResumeCandidate } from "./todo-rules.js";

/**
 * The status projection (`loopgate goal status`): todos by status and class, gates, handoffs, runtime
 * state, frontier gaps, budget used. Rebuilt from the log every time; a pure function of the facts,
 * the health input and now.
 */
export interface TodoView {
  id: string;
  class: TodoClass;
  status: TodoStatus;
  content: string;
  claimed_by: string | null;
  resume_when: TodoState["resume_when"];
  resume_candidate: boolean;
  superseded_by: string | null;
  successors: string[];
  depends_on: string[];
  note: "superseded" | null;
  no_followup: string | null;
  completion: TodoState["completion"];
  decision: TodoState["decision"];
}

export interface GateView {
  gate_id: string;
  scope: string;
  global: boolean;
  status: TodoStatus;
  decision: TodoState["decision"];
  scope_status: ScopeStatus;
  resume_when: TodoState["resume_when"];
}

export interface GoalStatusView {
  goal_id: string;
  objective: string;
  activation: "active" | "stopped";
  revision: string;
  todos: TodoView[];
  by_status: Record<TodoStatus, string[]>;
  by_class: Record<TodoClass, string[]>;
  gates: GateView[];
  handoffs: Handoff[];
  acceptance: AcceptanceStatus[];
  runtime_state: RuntimeState;
  reason: string;
  selected_todo: string | null;
  frontier_gaps: FrontierGap[];
  terminal: boolean;
  budget: BudgetUsage;
  anomalies: string[];
}

const toView = (state: GoalState, t: TodoState, now: string): TodoView => ({
  id: t.id,
  class: t.class,
  status: t.status,
  content: t.content,
  claimed_by: t.claimed_by,
  resume_when: t.resume_when,
  resume_candidate: isResumeCandidate(state, t, now),
  superseded_by: t.superseded_by,
  successors: t.successors,
  depends_on: t.depends_on,
  note: t.note,
  no_followup: t.no_followup?.rationale ?? null,
  completion: t.completion,
  decision: t.decision,
});

/** The status view of a folded goal. */
export function projectStatus(state: GoalState, ctx: GoalContext): GoalStatusView {
  const todos = state.order.map((id) => toView(state, state.todos[id] as TodoState, ctx.now));
  const by_status = Object.fromEntries(
    TODO_STATUSES.map((s) => [s, todos.filter((t) => t.status === s).map((t) => t.id)]),
  ) as Record<TodoStatus, string[]>;
  const by_class = Object.fromEntries(
    TODO_CLASSES.map((c) => [c, todos.filter((t) => t.class === c).map((t) => t.id)]),
  ) as Record<TodoClass, string[]>;
  const a = assess(state, ctx);
  const closure: Closure = terminalClosure(state, ctx, a);
  return {
    goal_id: state.goalId,
    objective: state.objective,
    activation: state.activation,
    revision: state.revision,
    todos,
    by_status,
    by_class,
    gates: gateTodos(state).map((g) => ({
      gate_id: g.id,
      scope: g.decision_scope ?? "*",
      global: g.global_gate,
      status: g.status,
      decision: g.decision,
      scope_status: g.global_gate
        ? g.decision === "approved"
          ? "approved"
          : "pending"
        : scopeStatus(state, g.decision_scope ?? ""),
      resume_when: g.resume_when,
    })),
    handoffs: handoffs(state),
    acceptance: acceptanceReport(state),
    runtime_state: a.runtime_state,
    reason: a.reason,
    selected_todo:
      a.runtime_state === "eligible" && a.selection?.kind === "todo" ? a.selection.todo_id : null,
    frontier_gaps: closure.gaps,
    terminal: closure.terminal,
    budget: a.budget,
    anomalies: state.anomalies,
  };
}

/** The status view rebuilt from scratch from the whole goal stream. */
export function rebuildStatus(events: readonly GoalEventBody[], ctx: GoalContext): GoalStatusView {
  return projectStatus(events.reduce(evolve, initialState()), ctx);
}
