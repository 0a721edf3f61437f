import { type BudgetUsage, budgetUsage } from "./budget.js";
import { type PendingGate, pendingGates, scopeWaits } from "./gates.js";
import type { GoalState, TodoState } from "./goal-state-shape.js";
import { heldBackBy } from "./handoff.js";
import { monitorsStoppedByFailures } from "./monitor-goal.js";
import { acceptanceReport, advancementExhausted, type Obligation, obligations } from "./obligations.js";
import { dependencyResolved, isResumeCandidate } from "./todo-rules.js";

/**
 * The quota runtime state, recomputed every time from the facts, the health input and now:
 * the first of `blocked_health > operator_gate > focus_wait > eligible > waiting > throttled > paused`
 * whose condition holds. Never stored.
 */
export const RUNTIME_PRECEDENCE = [
  "blocked_health",
  "operator_gate",
  "focus_wait",
  "eligible",
  "waiting",
  "throttled",
  "paused",
] as const;
export type RuntimeState = (typeof RUNTIME_PRECEDENCE)[number];

/** Something outside the log that makes running unsafe: a task file missing or invalid, the goal
 * workspace dirty or missing, a failed sandbox self-test. The caller observes these and passes them in. */
export interface HealthIssue {
  code: string;
  detail: string;
  todo_id?: string;
}

/** What the derived decisions read besides the facts: the time and the observed health. */
export interface GoalContext {
  now: Date;
  health: readonly HealthIssue[];
}

/** The one bounded action a turn would take now. */
export type Selection =
  | { kind: "todo"; todoId: string; reason: string }
  | { kind: "acceptance"; acceptanceIds: string[]; reason: string };

/** Why an unfinished todo is not selected (it is waiting, not runnable). */
export interface TodoWait {
  todoId: string;
  why: string;
}

/** Everything the runtime state, the contract and the closure are derived from. */
export interface Assessment {
  runtimeState: RuntimeState;
  reason: string;
  /** The conditions, one per runtime state, before precedence picks the first that holds. */
  conditions: Record<RuntimeState, boolean>;
  selection: Selection | null;
  health: HealthIssue[];
  gates: PendingGate[];
  /** Things only a person can do now (besides deciding gates): user actions, reopen candidates, rejected scopes. */
  operatorActions: {
    todoId: string;
    action: "user_action" | "resume_candidate" | "rejected_scope" | "monitor_stopped";
    detail: string;
  }[];
  obligations: Obligation[];
  waits: TodoWait[];
  budget: BudgetUsage;
}

const todosOf = (state: GoalState) => state.order.map((id) => state.todos[id] as TodoState);

/** Why `t` cannot be selected now, or null when it can (decisions, dependencies, handoffs, claims). */
export function whyNotRunnable(state: GoalState, t: TodoState): string | null {
  const waits = scopeWaits(state, t);
  if (waits.length) return `needs ${waits.map((w) => `scope ${w.scope} (${w.status})`).join(", ")}`;
  const deps = t.dependsOn.filter((d) => !dependencyResolved(state, d));
  if (deps.length) return `depends on ${deps.join(", ")}`;
  const held = heldBackBy(state, t.id);
  if (held.length) return `held back by blocker ${held.join(", ")}`;
  const agent = state.agent?.agent_id ?? null;
  if (t.claimedBy !== null && t.claimedBy !== agent) return `claimed by ${t.claimedBy}`;
  return null;
}

/** Computes the assessment: selection, waits, gates, obligations, budget, and the runtime state. */
export function assess(state: GoalState, ctx: GoalContext): Assessment {
  const todos = todosOf(state);
  const health: HealthIssue[] = [
    ...ctx.health,
    ...state.anomalies.map((a) => ({ code: "log_anomaly", detail: a })),
  ];
  const gates = pendingGates(state, ctx.now);
  const operatorActions: Assessment["operatorActions"] = [];
  const waits: TodoWait[] = [];
  let selection: Selection | null = null;
  const agent = state.agent?.agent_id ?? null;
  const runnable: TodoState[] = [];
  const stoppedMonitors = new Map(monitorsStoppedByFailures(state).map((m) => [m.todoId, m.detail]));
  for (const t of todos) {
    if (t.status === "done" || t.class === "user_gate") continue;
    if (t.status === "deferred") {
      if (isResumeCandidate(state, t, ctx.now))
        operatorActions.push({
          todoId: t.id,
          action: "resume_candidate",
          detail: "its resume_when holds: reopen it explicitly",
        });
      else waits.push({ todoId: t.id, why: "deferred until its resume_when holds" });
      continue;
    }
    // A monitor stopped by its failed polls waits on a person (repair and reopen, or close), not on time.
    const stopped = t.status === "blocked" ? stoppedMonitors.get(t.id) : undefined;
    if (stopped !== undefined) {
      operatorActions.push({ todoId: t.id, action: "monitor_stopped", detail: stopped });
      continue;
    }
    if (t.status === "blocked") {
      waits.push({ todoId: t.id, why: `blocked: ${t.blockReason ?? ""}` });
      continue;
    }
    if (t.class === "user_action") {
      operatorActions.push({ todoId: t.id, action: "user_action", detail: t.content });
      continue;
    }
    const rejected = scopeWaits(state, t).filter((w) => w.status === "rejected" || w.status === "cancelled");
    if (rejected.length) {
      operatorActions.push({
        todoId: t.id,
        action: "rejected_scope",
        detail: `scope ${rejected.map((w) => `${w.scope} was ${w.status}`).join(", ")}: supersede it or close it with no_followup`,
      });
      continue;
    }
    if (t.class === "continuous_monitor") {
      waits.push({ todoId: t.id, why: "a monitor: polled by governed turns on its cadence" });
      continue;
    }
    if (!t.task) {
      waits.push({
        todoId: t.id,
        why: "a blocker without a task: cleared by a person (close or supersede it)",
      });
      continue;
    }
    const why = whyNotRunnable(state, t);
    if (why) waits.push({ todoId: t.id, why });
    else runnable.push(t);
  }
  const own = runnable.find((t) => t.claimedBy !== null && t.claimedBy === agent);
  const first = own ?? runnable[0];
  if (first)
    selection = {
      kind: "todo",
      todoId: first.id,
      reason: own
        ? `${first.id} is open, claimed by ${agent}, and needs nothing else`
        : `${first.id} is the first open todo whose decisions and dependencies are in place`,
    };
  else if (advancementExhausted(state)) {
    const report = acceptanceReport(state);
    const unrun = report.filter((a) => !a.proved && a.latest === null);
    if (unrun.length && report.every((a) => a.proved || a.latest === null))
      selection = {
        kind: "acceptance",
        acceptanceIds: unrun.map((a) => a.id),
        reason: "no advancement todo is left: prove acceptance fresh on the current revision",
      };
  }
  const obl = obligations(state);
  const budget = budgetUsage(state, ctx.now);
  const active = state.activation === "active";
  const work = selection !== null;
  const budgetOk = budget.exhausted.length === 0;
  const decisionNeeded = gates.length > 0 || operatorActions.length > 0;
  const pending = waits.length > 0;
  const conditions: Record<RuntimeState, boolean> = {
    blocked_health: health.length > 0,
    operator_gate: active && decisionNeeded && !work,
    focus_wait: active && obl.length > 0,
    eligible: active && work && budgetOk,
    waiting: active && !work && (pending || budgetOk),
    throttled: active && !budgetOk,
    paused: !active,
  };
  const runtimeState = RUNTIME_PRECEDENCE.find((s) => conditions[s]) ?? "paused";
  return {
    runtimeState,
    reason: reasonFor(runtimeState, { health, gates, operatorActions, obl, selection, waits, budget }),
    conditions,
    selection,
    health,
    gates,
    operatorActions,
    obligations: obl,
    waits,
    budget,
  };
}

function reasonFor(
  s: RuntimeState,
  a: Pick<Assessment, "health" | "gates" | "operatorActions" | "selection" | "waits" | "budget"> & {
    obl: Obligation[];
  },
): string {
  switch (s) {
    case "blocked_health":
      return `unhealthy: ${a.health.map((h) => `${h.code}: ${h.detail}`).join("; ")}`;
    case "operator_gate":
      return `waiting on a person: ${[...a.gates.map((g) => `gate ${g.gateId} (${g.scope}${g.askedAgain ? ", asked again: its deferral's condition holds" : ""})`), ...a.operatorActions.map((o) => `${o.todoId} (${o.action})`)].join(", ")}`;
    case "focus_wait":
      return a.obl.map((o) => o.detail).join("; ");
    case "eligible":
      return a.selection?.reason ?? "";
    case "waiting":
      return a.waits.length
        ? a.waits.map((w) => `${w.todoId}: ${w.why}`).join("; ")
        : "nothing to run and nothing owed";
    case "throttled":
      return `budget spent: ${a.budget.exhausted.join(", ")}`;
    case "paused":
      return "the goal is stopped (loopgate goal resume)";
  }
}

/** The runtime state alone. */
export function runtimeState(state: GoalState, ctx: GoalContext): RuntimeState {
  return assess(state, ctx).runtimeState;
}
