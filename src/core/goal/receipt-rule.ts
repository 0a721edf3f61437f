import type { TaskRef, TodoClass, TodoStatus, ValidationReceipt } from "../events/goal/goal-events.js";

/** What of the goal's state the receipt rule reads (GoalState has these; kept apart so the fold can use it). */
export interface ReceiptContext {
  goalId: string;
  revision: string;
  /** Run id → the todo it is already the evidence of. */
  evidenceRuns: Record<string, string>;
}

/** What of a todo the receipt rule reads (TodoState has these). */
export interface ReceiptTodo {
  id: string;
  class: TodoClass;
  status: TodoStatus;
  task: TaskRef | null;
}

/**
 * Why `receipt` cannot complete `todo` in `state`, or null when it can. A receipt proves a todo only when
 * it is a SUCCESS of exactly that todo's task (digest), for this goal, on the goal workspace's CURRENT
 * revision, and its run is not already another todo's evidence.
 */
export function receiptMismatch(
  state: ReceiptContext,
  todo: ReceiptTodo,
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
