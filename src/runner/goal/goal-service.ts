import { DomainError } from "../../core/errors.js";
import type { HealthIssue } from "../../core/goal/index.js";
import type { EventStore } from "../../store/event-store.js";
import { loadTask } from "../load-task.js";
import { decideIntent, type GoalIntent, goalView, originOf } from "./goal-engine.js";
import { goalRepo } from "./goal-repo.js";
import { appendGoal, type GoalLog, NeedsRebaseError, readGoal } from "./goal-store.js";
import type { GoalFacts, GoalView } from "./goal-view.js";

/** A goal read from the store with the outside facts its derived decisions need. */
export interface ReadGoal {
  log: GoalLog;
  facts: GoalFacts;
  view: GoalView;
}

/**
 * The health input of the runtime state: every todo's task file present, valid and unchanged since it
 * was recorded; the goal workspace present, clean, and at the revision the goal stream holds.
 */
export async function goalHealth(
  store: EventStore,
  storeDir: string,
  view: GoalView,
): Promise<{ problems: HealthIssue[]; head: string | null }> {
  const problems: HealthIssue[] = [];
  for (const t of view.todos) {
    if (!t.task || t.status !== "open") continue;
    try {
      const loaded = loadTask(t.task.path);
      if (loaded.digest !== t.task.digest)
        problems.push({
          code: "task_file_changed",
          todo_id: t.id,
          detail: `${t.id}: the task file ${t.task.path} changed since it was recorded (digest ${loaded.digest.slice(0, 12)}, recorded ${t.task.digest.slice(0, 12)})`,
        });
    } catch (e) {
      problems.push({
        code: "task_file_invalid",
        todo_id: t.id,
        detail: `${t.id}: the task file is missing or invalid: ${(e as Error).message.split("\n")[0]}`,
      });
    }
  }
  const ws = await goalRepo(store, storeDir).health(view.goalId, view.revision);
  problems.push(...ws.problems);
  return { problems, head: ws.revision };
}

/** Reads a goal, its health and its view. */
export async function openGoal(
  store: EventStore,
  storeDir: string,
  goalId: string,
  now = new Date(),
): Promise<ReadGoal> {
  const log = await readGoal(store, storeDir, goalId);
  const first = goalView(log.events, log.revision, { now, health: [], workspaceRevision: null });
  const h = await goalHealth(store, storeDir, first);
  const facts: GoalFacts = { now, health: h.problems, workspaceRevision: h.head };
  return { log, facts, view: goalView(log.events, log.revision, facts) };
}

/**
 * One guarded write: the intent is decided on the goal as read, and appended at the revision it was read
 * at (or the one the user passed). A stale revision is NeedsRebaseError with the current one, never merged;
 * a refused intent is the decider's DomainError, naming the rule.
 */
export async function writeGoal(
  store: EventStore,
  storeDir: string,
  goalId: string,
  intent: GoalIntent,
  expect: number | undefined,
  byOperator = true,
): Promise<{ revision: number; events: string[] }> {
  const read = await openGoal(store, storeDir, goalId);
  if (expect !== undefined && expect !== read.log.revision)
    throw new NeedsRebaseError(goalId, expect, read.log.revision);
  const bodies = decideIntent(intent, read.log.events, read.facts);
  if (bodies.length === 0) throw new DomainError(`${intent.kind}: nothing to record`);
  const revision = await appendGoal(store, goalId, bodies, expect ?? read.log.revision, (t) =>
    originOf(t, byOperator),
  );
  return { revision, events: bodies.map((b) => b.type) };
}
