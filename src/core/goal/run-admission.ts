import { budgetUsage } from "./budget.js";
import { type ScopeWait, scopeWaits } from "./gates.js";
import type { GoalState, TodoState } from "./goal-state-shape.js";
import { heldBackBy } from "./handoff.js";
import { obligations } from "./obligations.js";
import type { GoalContext } from "./runtime-state.js";
import { dependencyResolved, isResumeCandidate } from "./todo-rules.js";

/**
 * Whether a person may run a todo's task now (`todo run`): gates guard the effect, not only the
 * bookkeeping. Refused, before any builder starts, in the runtime states' precedence: `blocked_health`
 * (something outside the log makes running unsafe), a decision scope the todo needs and no gate has
 * approved (the gate covers exactly this work: work it does not cover still runs), the todo's own
 * relations (a `depends_on` not yet resolved, a blocker whose handoff still holds it back), `throttled`
 * (the budget is spent: nothing is delivered until the window reopens or the owner changes the budget),
 * `paused` (the goal is stopped), and `focus_wait` (a replan is owed: only the owed replan work runs,
 * and a todo's task is not it). Pure: the health and the time are passed in.
 */

/** Why the todo's task may not run now: the rule (or runtime state) that refuses it, in words. */
export interface RunRefusal {
  /** The rule or runtime state: `no_such_todo`, `run_needs_task`, `open_to_run`, `blocked_health`, `decision_scope`, `depends_on`, `handoff_blocking`, `throttled`, `paused`, `focus_wait`. */
  rule: string;
  message: string;
  /** A loopgate command (without `loopgate`) that answers it, when one does. */
  next?: string;
}

function scopeWords(w: ScopeWait, state: GoalState, now: Date): string {
  const gates = w.gates.map((id) => state.todos[id] as TodoState);
  const named = gates.map((g) => g.id).join(", ");
  switch (w.status) {
    case "pending":
      return `scope ${w.scope}: gate ${named} waits on a person`;
    case "deferred": {
      const due = gates.some((g) => isResumeCandidate(state, g, now));
      return `scope ${w.scope}: gate ${named} is deferred${due ? " and asked again (its condition holds)" : " until its condition holds"}`;
    }
    case "rejected":
    case "cancelled":
      return `scope ${w.scope}: gate ${named} was ${w.status} (supersede the todo or close it with no_followup)`;
    case "missing":
      return `scope ${w.scope}: no gate decides it`;
  }
}

/** Why `todoId`'s task may not run now, or null when it may. */
export function runRefusal(state: GoalState, todoId: string, ctx: GoalContext): RunRefusal | null {
  const g = state.goalId;
  const t = state.todos[todoId];
  if (!t) return { rule: "no_such_todo", message: `goal ${g} has no todo ${todoId}` };
  if (t.class !== "advancement_task" || !t.task)
    return {
      rule: "run_needs_task",
      message: `${todoId} is a ${t.class}: only an advancement_task has a task to run`,
    };
  if (t.status !== "open")
    return {
      rule: "open_to_run",
      message: `${todoId} is ${t.status}: only an open todo is run${t.status === "done" ? "" : " (reopen it first)"}`,
    };
  const health = [...ctx.health, ...state.anomalies.map((a) => ({ code: "log_anomaly", detail: a }))];
  if (health.length)
    return {
      rule: "blocked_health",
      message: `blocked_health: ${health.map((h) => h.detail).join("; ")}; nothing was run (runtime state blocked_health runs no work until it is repaired)`,
      next: `goal status ${g}`,
    };
  const waits = scopeWaits(state, t);
  if (waits.length) {
    const pending = waits.find((w) => w.status === "pending" || w.status === "deferred");
    const gate = pending?.gates[0];
    return {
      rule: "decision_scope",
      message: `rule decision_scope: ${todoId} needs a decision no gate has approved — ${waits.map((w) => scopeWords(w, state, ctx.now)).join("; ")}; nothing was run (a gate guards the work it covers)`,
      ...(gate ? { next: `gate approve ${g} ${gate}` } : {}),
    };
  }
  const unresolved = t.dependsOn.filter((d) => !dependencyResolved(state, d));
  if (unresolved.length)
    return {
      rule: "depends_on",
      message: `rule depends_on: ${todoId} waits for ${unresolved.join(", ")} (not done yet); nothing was run`,
      next: `goal status ${g}`,
    };
  const blockers = heldBackBy(state, todoId);
  if (blockers.length)
    return {
      rule: "handoff_blocking",
      message: `rule handoff_blocking: ${todoId} is held back by blocker ${blockers.join(", ")} until it is cleared; nothing was run`,
      next: `goal status ${g}`,
    };
  const budget = budgetUsage(state, ctx.now);
  if (budget.exhausted.length)
    return {
      rule: "throttled",
      message: `throttled: the goal's budget is spent (${budget.exhausted.join(", ")}); nothing was run (runtime state throttled delivers no work${budget.windowReopensAt ? `; the quota window reopens at ${budget.windowReopensAt}` : "; the goal's owner changes the budget"})`,
    };
  if (state.activation === "stopped")
    return {
      rule: "paused",
      message: `goal ${g} is stopped (runtime state paused): a stopped goal runs no work; resume it first`,
      next: `goal resume ${g}`,
    };
  const owed = obligations(state).filter((o) => o.kind !== "closeout");
  if (owed.length)
    return {
      rule: "focus_wait",
      message: `focus_wait: a replan is owed (${owed.map((o) => o.detail).join("; ")}); only the replan runs until it is answered, so ${todoId} was not run`,
      next: `goal vision show ${g}`,
    };
  return null;
}
