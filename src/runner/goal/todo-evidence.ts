import type { GoalState } from "../../core/goal/goal-state-shape.js";
import { DomainError } from "../../core/kernel/errors.js";
import type { EventStore } from "../../store/kernel/event-store.js";
import { RunJournal } from "../stream/run-journal.js";
import { type GoalIntent, goalState } from "./goal-engine.js";
import { readGoal } from "./goal-store.js";
import { goalTaskFile } from "./goal-tasks.js";
import { acceptedChange } from "./repo/deliverables.js";
import { type RunReceipt, receiptOfLog } from "./run-receipts.js";

/**
 * What `todo done --evidence RUN` asks of the goal: the run's receipt, and what of the run's accepted
 * change (the deliverables its gates saw, the change a governed turn would commit) the goal workspace
 * does not hold. The run started from the goal's revision (the receipt rule requires the current one),
 * so every path it carries or drops is a change that is not in the workspace: done is refused on it
 * (rule durable_writeback_before_done). Only a run that changed nothing — its gates passed on the
 * revision as it is — completes a todo outside a governed turn.
 */

/** The paths of `runId`'s accepted change that the goal workspace at the run's base does not hold. */
export async function unwrittenPaths(
  store: EventStore,
  localDir: string,
  goalId: string,
  runId: string,
  task: { path: string; digest: string },
  /** The run's events when the caller has read them already. */
  read?: Awaited<ReturnType<EventStore["readStream"]>>,
): Promise<string[]> {
  const events = read ?? (await store.readStream(RunJournal.stream(runId)));
  const loaded = await goalTaskFile(store, localDir, goalId, task.path, task.digest);
  let change: Awaited<ReturnType<typeof acceptedChange>>;
  try {
    change = await acceptedChange(store, runId, loaded, localDir, events);
  } catch (e) {
    throw new DomainError(
      `rule durable_writeback_before_done: cannot tell what run ${runId} changed (${(e as Error).message}); nothing is marked done on a change nobody can read`,
    );
  }
  if (change.refusal)
    throw new DomainError(
      `rule durable_writeback_before_done: run ${runId}'s change is not the one its gates saw (${change.refusal}); nothing is marked done`,
    );
  // Folders are implied by the files in them (git keeps no empty folder): only files, links and drops count.
  return [...change.carry.filter((e) => e.type !== "dir").map((e) => e.path), ...change.drop].sort();
}

/** Whether the receipt is one the goal would take as `todoId`'s evidence, apart from what it changed. */
function provesTodo(state: GoalState, todoId: string, receipt: RunReceipt): boolean {
  const t = state.todos[todoId];
  return (
    receipt.status === "SUCCESS" &&
    receipt.goal_id === state.goalId &&
    receipt.goal_revision === state.revision &&
    t?.task?.digest === receipt.task_digest
  );
}

/**
 * The `done` intent for `todoId` on the evidence of `runId`: its receipt (from loopgate's own record of
 * the run), and — when the receipt would prove the todo — the paths of its change the goal workspace
 * lacks. A receipt the goal refuses for another reason is left to the goal's own rule (the decider names it).
 */
export async function doneIntent(
  store: EventStore,
  localDir: string,
  goalId: string,
  todoId: string,
  runId: string,
): Promise<Extract<GoalIntent, { kind: "done" }>> {
  const events = await store.readStream(RunJournal.stream(runId));
  const { receipt } = receiptOfLog(runId, events, localDir);
  const state = goalState((await readGoal(store, localDir, goalId)).events);
  const task = state.todos[todoId]?.task;
  const unwritten =
    task && provesTodo(state, todoId, receipt)
      ? await unwrittenPaths(store, localDir, goalId, runId, task, events)
      : [];
  return { kind: "done", todoId, receipt, unwritten };
}
