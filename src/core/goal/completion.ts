import type { GoalEventBody, ValidationReceipt } from "../events/goal/goal-events.js";
import { GOAL_LIMITS } from "../events/goal/goal-events.js";
import { boundText } from "../kernel/bounded.js";
import { fail, need } from "./command-checks.js";
import { scopeWaits } from "./gates.js";
import type { GoalState } from "./goal-state-shape.js";
import { heldBackBy } from "./handoff.js";
import { receiptMismatch } from "./receipt-rule.js";
import { dependencyResolved } from "./todo-rules.js";

/**
 * Done on evidence. `receipt` is what loopgate derived from the run's envelope (undefined: an operator
 * asking for "done" without evidence, always refused). `writeback`, when given, records in the same
 * append the commit that applied the run's change (the receipt must be on the revision before it).
 * Without a writeback, `unwritten` lists the paths of the run's accepted change that the goal workspace
 * does not hold (the caller reads the run); any is refused: done means the outcome is persisted.
 */
export interface CompleteTodoCommand {
  type: "complete_todo";
  todoId: string;
  receipt?: ValidationReceipt;
  writeback?: { revision: string; reason: string; turnId?: string };
  unwritten?: readonly string[];
}

/**
 * Why the goal would refuse to mark `todoId` done with `receipt` now (the rules of complete_todo apart
 * from the writeback's revision), or null when it would accept. A query, so a governed turn can ask before
 * it commits anything, without deciding on a stand-in revision.
 */
export function completionRefusal(
  state: GoalState,
  todoId: string,
  receipt: CompleteTodoCommand["receipt"],
): string | null {
  try {
    need(state, todoId, "complete_todo");
  } catch (e) {
    return (e as Error).message;
  }
  const t = state.todos[todoId] as NonNullable<GoalState["todos"][string]>;
  if (!receipt)
    return `complete_todo: rule done_needs_receipt: ${t.id} cannot be marked done without evidence; give the run id of a SUCCESS of its task on the current revision (--evidence RUN_ID), or close it with a no_followup rationale`;
  const why = receiptMismatch(state, t, receipt);
  if (why) return `complete_todo: ${why}`;
  const waits = scopeWaits(state, t);
  if (waits.length)
    return `complete_todo: rule decision_scope: ${t.id} needs ${waits.map((w) => `scope ${w.scope} (${w.status})`).join(", ")} approved first`;
  const open = t.dependsOn.filter((d) => !dependencyResolved(state, d));
  if (open.length)
    return `complete_todo: rule depends_on: ${t.id} depends on ${open.join(", ")}, not done yet`;
  const blockers = heldBackBy(state, t.id);
  if (blockers.length)
    return `complete_todo: rule handoff_blocking: ${t.id} is held back by blocker ${blockers.join(", ")} until it is cleared`;
  return null;
}

export function completeTodo(command: CompleteTodoCommand, state: GoalState): GoalEventBody[] {
  const refusal = completionRefusal(state, command.todoId, command.receipt);
  if (refusal || !command.receipt) return fail(refusal ?? "complete_todo: no receipt");
  const t = need(state, command.todoId, "complete_todo");
  const unwritten = command.writeback ? [] : (command.unwritten ?? []);
  if (unwritten.length)
    fail(
      `complete_todo: rule durable_writeback_before_done: run ${command.receipt.run_id} changed ${unwritten.length} path(s) (${unwritten.slice(0, 5).join(", ")}${unwritten.length > 5 ? ", …" : ""}) that the goal workspace does not hold at ${state.revision.slice(0, 12)}; done means the outcome is persisted: a governed turn runs ${t.id} and writes its change back with its completion (loopgate goal tick ${state.goalId})`,
    );
  const events: GoalEventBody[] = [
    { type: "todo_completed", data: { todo_id: t.id, receipt: command.receipt } },
  ];
  if (command.writeback) {
    if (command.writeback.revision === state.revision)
      fail("complete_todo: the writeback revision did not change");
    events.push({
      type: "goal_revision_recorded",
      data: {
        revision: command.writeback.revision,
        previous: state.revision,
        reason: boundText(command.writeback.reason, GOAL_LIMITS.reason),
        ...(command.writeback.turnId ? { turn_id: command.writeback.turnId } : {}),
      },
    });
  }
  return events;
}
