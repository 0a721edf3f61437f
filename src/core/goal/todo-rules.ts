import { InputError } from "../errors.js";
import { ResumeCondition, TODO_STATUSES, type ValidationReceipt } from "./goal-events.js";
import type { GoalState, TodoState } from "./goal-state.js";

/**
 * The lifecycle rules both the decider and the fold check: what a validation receipt must match, when
 * a dependency counts as resolved, when a resume condition holds.
 */

/**
 * Why `receipt` cannot complete `todo` in `state`, or null when it can. A receipt proves a todo only when
 * it is a SUCCESS of exactly that todo's task (digest), for this goal, on the goal workspace's CURRENT
 * revision, and its run is not already another todo's evidence.
 */
export function receiptMismatch(
  state: GoalState,
  todo: TodoState,
  receipt: ValidationReceipt,
): string | null {
  if (todo.status !== "open")
    return `rule open_to_done: only an open todo can be completed; ${todo.id} is ${todo.status}${todo.status === "deferred" || todo.status === "blocked" ? " (reopen it first)" : ""}`;
  if (!todo.task)
    return `rule done_needs_receipt: ${todo.id} (${todo.class}) has no task whose run could prove it; close it with a no_followup rationale, or decide it as a gate`;
  if (receipt.status !== "SUCCESS")
    return `rule done_needs_receipt: run ${receipt.run_id} ended ${receipt.status}, and only a SUCCESS is a validation receipt`;
  if (receipt.goal_id !== state.goalId)
    return `rule receipt_matches_goal: run ${receipt.run_id} was for goal ${receipt.goal_id}, not ${state.goalId}`;
  if (receipt.task_digest !== todo.task.digest)
    return `rule receipt_matches_task: run ${receipt.run_id} ran task ${receipt.task_id} (digest ${receipt.task_digest}), not ${todo.id}'s task ${todo.task.task_id} (digest ${todo.task.digest})`;
  if (receipt.goal_revision !== state.revision)
    return `rule receipt_on_current_revision: run ${receipt.run_id} ran on goal revision ${receipt.goal_revision}, but the goal workspace is now at ${state.revision}; run it again on the current revision`;
  const used = state.evidenceRuns[receipt.run_id];
  if (used) return `rule evidence_used_once: run ${receipt.run_id} is already the evidence of ${used}`;
  return null;
}

/** The todo a chain of supersedes ends in (itself when not superseded). */
export function replacementOf(state: GoalState, id: string): TodoState | undefined {
  let t = state.todos[id];
  const seen = new Set<string>();
  while (t?.superseded_by && !seen.has(t.id)) {
    seen.add(t.id);
    t = state.todos[t.superseded_by];
  }
  return t;
}

/**
 * A dependency is resolved when it (or the replacement it was superseded by) is done with evidence, an
 * approval, or a no_followup rationale. A rejected or cancelled gate does not resolve what depends on it.
 */
export function dependencyResolved(state: GoalState, id: string): boolean {
  const t = replacementOf(state, id);
  if (t?.status !== "done") return false;
  if (t.class === "user_gate") return t.decision === "approved";
  return true;
}

/** Whether a resume condition holds at `now` (ISO time). */
export function conditionHolds(state: GoalState, cond: ResumeCondition, now: string): boolean {
  switch (cond.kind) {
    case "at":
      return Date.parse(now) >= Date.parse(cond.at);
    case "todo_status":
      return state.todos[cond.todo_id]?.status === cond.status;
    case "gate_decision": {
      const g = state.todos[cond.gate_id];
      if (!g || g.decision === null) return false;
      return cond.decision === "any" || g.decision === cond.decision;
    }
  }
}

/** A deferred todo whose resume condition holds now: a derived candidate; reopening stays explicit. */
export function isResumeCandidate(state: GoalState, todo: TodoState, now: string): boolean {
  return (
    todo.status === "deferred" && todo.resume_when !== null && conditionHolds(state, todo.resume_when, now)
  );
}

/**
 * Parses a `--until COND`: `at:ISO-TIME` (or a bare ISO time), `todo:TODO_ID=STATUS`,
 * `gate:GATE_ID=approved|rejected|cancelled|any`. Anything else is refused, naming the forms.
 */
export function parseResumeCondition(text: string, where = "--until"): ResumeCondition {
  const t = text.trim();
  const forms = "at:2026-12-01T12:00:00Z, todo:todo_x=done, or gate:todo_y=approved";
  let raw: unknown;
  const m = /^(at|todo|gate):(.*)$/.exec(t);
  if (!m) raw = { kind: "at", at: t };
  else if (m[1] === "at") raw = { kind: "at", at: m[2] };
  else {
    const [id, value] = (m[2] ?? "").split("=");
    raw =
      m[1] === "todo"
        ? { kind: "todo_status", todo_id: id, status: value }
        : { kind: "gate_decision", gate_id: id, decision: value };
  }
  const parsed = ResumeCondition.safeParse(raw);
  if (!parsed.success)
    throw new InputError(
      `"${text}" is not a machine-readable resume condition; write ${forms} (a todo status is one of ${TODO_STATUSES.join("|")})`,
      where,
    );
  return parsed.data;
}

/** A condition as the CLI writes it (the inverse of parseResumeCondition). */
export function formatResumeCondition(cond: ResumeCondition): string {
  switch (cond.kind) {
    case "at":
      return `at:${cond.at}`;
    case "todo_status":
      return `todo:${cond.todo_id}=${cond.status}`;
    case "gate_decision":
      return `gate:${cond.gate_id}=${cond.decision}`;
  }
}
