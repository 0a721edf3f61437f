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
  claimedBy: string | null;
  resumeWhen: TodoState["resumeWhen"];
  resumeCandidate: boolean;
  supersededBy: string | null;
  successors: string[];
  dependsOn: string[];
  note: "superseded" | null;
  noFollowup: string | null;
  completion: TodoState["completion"];
  decision: TodoState["decision"];
}

export interface GateView {
  gateId: string;
  scope: string;
  global: boolean;
  status: TodoStatus;
  decision: TodoState["decision"];
  scopeStatus: ScopeStatus;
  resumeWhen: TodoState["resumeWhen"];
}

export interface GoalStatusView {
  goalId: string;
  objective: string;
  activation: "active" | "stopped";
  revision: string;
  todos: TodoView[];
  byStatus: Record<TodoStatus, string[]>;
  byClass: Record<TodoClass, string[]>;
  gates: GateView[];
  handoffs: Handoff[];
  acceptance: AcceptanceStatus[];
  runtimeState: RuntimeState;
  reason: string;
  selectedTodo: string | null;
  frontierGaps: FrontierGap[];
  terminal: boolean;
  budget: BudgetUsage;
  anomalies: string[];
}

const toView = (state: GoalState, t: TodoState, now: Date): TodoView => ({
  id: t.id,
  class: t.class,
  status: t.status,
  content: t.content,
  claimedBy: t.claimedBy,
  resumeWhen: t.resumeWhen,
  resumeCandidate: isResumeCandidate(state, t, now),
  supersededBy: t.supersededBy,
  successors: t.successors,
  dependsOn: t.dependsOn,
  note: t.note,
  noFollowup: t.noFollowup?.rationale ?? null,
  completion: t.completion,
  decision: t.decision,
});

/** The status view of a folded goal. */
export function projectStatus(state: GoalState, ctx: GoalContext): GoalStatusView {
  const todos = state.order.map((id) => toView(state, state.todos[id] as TodoState, ctx.now));
  const byStatus = Object.fromEntries(
    TODO_STATUSES.map((s) => [s, todos.filter((t) => t.status === s).map((t) => t.id)]),
  ) as Record<TodoStatus, string[]>;
  const byClass = Object.fromEntries(
    TODO_CLASSES.map((c) => [c, todos.filter((t) => t.class === c).map((t) => t.id)]),
  ) as Record<TodoClass, string[]>;
  const a = assess(state, ctx);
  const closure: Closure = terminalClosure(state, ctx, a);
  return {
    goalId: state.goalId,
    objective: state.objective,
    activation: state.activation,
    revision: state.revision,
    todos,
    byStatus,
    byClass,
    gates: gateTodos(state).map((g) => ({
      gateId: g.id,
      scope: g.decisionScope ?? "*",
      global: g.globalGate,
      status: g.status,
      decision: g.decision,
      scopeStatus: g.globalGate
        ? g.decision === "approved"
          ? "approved"
          : "pending"
        : scopeStatus(state, g.decisionScope ?? ""),
      resumeWhen: g.resumeWhen,
    })),
    handoffs: handoffs(state),
    acceptance: acceptanceReport(state),
    runtimeState: a.runtimeState,
    reason: a.reason,
    selectedTodo: a.runtimeState === "eligible" && a.selection?.kind === "todo" ? a.selection.todoId : null,
    frontierGaps: closure.gaps,
    terminal: closure.terminal,
    budget: a.budget,
    anomalies: state.anomalies,
  };
}

/** The status view rebuilt from scratch from the whole goal stream. */
export function rebuildStatus(events: readonly GoalEventBody[], ctx: GoalContext): GoalStatusView {
  return projectStatus(events.reduce(evolve, initialState()), ctx);
}
