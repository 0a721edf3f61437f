import type { GoalState } from "../../core/goal/goal-state-shape.js";
import type { HealthIssue } from "../../core/goal/runtime-state.js";
import { DomainError } from "../../core/kernel/errors.js";
import type { EventStore } from "../../store/kernel/event-store.js";
import { asPostgresStore } from "../../store/open-store.js";
import { goalOfJob } from "../../store/postgres/run-queue-rows.js";
import { decideIntent, type GoalIntent, goalState, goalViewOf, originOf } from "./goal-engine.js";
import {
  appendGoal,
  type GoalLog,
  type GoalWriter,
  NeedsRebaseError,
  readGoal,
  writerOf,
} from "./goal-store.js";
import { checkGoalTask, GoalTaskError } from "./goal-tasks.js";
import type { GoalFacts, GoalView } from "./goal-view.js";
import { goalRepo } from "./repo/goal-repo.js";

/** A goal read from the store with the outside facts its derived decisions need. */
export interface ReadGoal {
  log: GoalLog;
  facts: GoalFacts;
  view: GoalView;
}

/**
 * The health input of the runtime state: every todo's task file present (here, or as its snapshot in a
 * shared store), valid and unchanged since it was recorded; the goal workspace present, clean, and at the revision the goal stream holds.
 */
export async function goalHealth(
  store: EventStore,
  localDir: string,
  view: HealthSubject,
): Promise<{ problems: HealthIssue[]; head: string | null }> {
  const problems: HealthIssue[] = [];
  for (const t of view.todos) {
    if (!t.task || t.status !== "open") continue;
    try {
      // Here or, on a shared store, its snapshot (a read writes nothing).
      await checkGoalTask(store, view.goalId, t.task.path, t.task.digest);
    } catch (e) {
      problems.push(
        e instanceof GoalTaskError && e.why === "changed"
          ? { code: "task_file_changed", todo_id: t.id, detail: `${t.id}: ${e.message}` }
          : {
              code: "task_file_invalid",
              todo_id: t.id,
              detail: `${t.id}: ${e instanceof GoalTaskError ? e.message : `the task file is missing or invalid: ${(e as Error).message.split("\n")[0]}`}`,
            },
      );
    }
  }
  const ws = await goalRepo(store, localDir).health(view.goalId, view.revision);
  problems.push(...ws.problems);
  return { problems, head: ws.revision };
}

/** What the health check looks at: the goal's open todos' task files and its workspace at its revision. */
export interface HealthSubject {
  goalId: string;
  revision: string;
  todos: readonly Pick<GoalView["todos"][number], "id" | "status" | "task">[];
}

/** The health of a goal already folded (a tick's journal): nothing is read from the stream again. */
export function goalStateHealth(
  store: EventStore,
  localDir: string,
  state: GoalState,
): Promise<{ problems: HealthIssue[]; head: string | null }> {
  const todos = state.order.flatMap((id) => {
    const t = state.todos[id];
    return t ? [{ id: t.id, status: t.status, task: t.task }] : [];
  });
  return goalHealth(store, localDir, { goalId: state.goalId, revision: state.revision, todos });
}

/** Reads a goal, its health and its view. */
export async function openGoal(
  store: EventStore,
  localDir: string,
  goalId: string,
  now = new Date(),
): Promise<ReadGoal> {
  const log = await readGoal(store, localDir, goalId);
  // Folded once: the health needs the todos and the revision, the view the same state with the facts.
  const state = goalState(log.events);
  const h = await goalStateHealth(store, localDir, state);
  const facts: GoalFacts = { now, health: h.problems, workspaceRevision: h.head };
  return { log, facts, view: goalViewOf(state, log.events, log.revision, facts) };
}

/**
 * One guarded write: the intent is decided on the goal as read, and appended at the revision it was read
 * at (or the one the user passed). A stale revision is NeedsRebaseError with the current one, never merged;
 * a refused intent is the decider's DomainError, naming the rule.
 * `writer`: a person's write (true, or `{ by }` naming who: meta.by of its operator-origin events) or
 * loopgate's own (false: origin runtime where the event type allows it).
 */
export async function writeGoal(
  store: EventStore,
  localDir: string,
  goalId: string,
  intent: GoalIntent,
  expect: number | undefined,
  writer: GoalWriter = true,
): Promise<{ revision: number; events: string[]; requeued?: string }> {
  const { byOperator, by } = writerOf(writer);
  const read = await openGoal(store, localDir, goalId);
  if (expect !== undefined && expect !== read.log.revision)
    throw new NeedsRebaseError(goalId, expect, read.log.revision);
  const bodies = decideIntent(intent, read.log.events, read.facts);
  if (bodies.length === 0) throw new DomainError(`${intent.kind}: nothing to record`);
  const revision = await appendGoal(
    store,
    goalId,
    bodies,
    expect ?? read.log.revision,
    (t) => originOf(t, byOperator),
    undefined,
    by,
  );
  const requeued = byOperator ? await requeueSubmitted(store, goalId) : null;
  return { revision, events: bodies.map((b) => b.type), ...(requeued ? { requeued } : {}) };
}

/**
 * A person's write to a goal its workers advance (a gate approved, a todo added, the goal resumed) can
 * make a turn runnable that no worker will queue: the last turn ended waiting on that person. On a
 * shared store, a goal that was ever submitted gets its next turn queued again (one per goal; kept when
 * one is queued already), with the options of its last turn. Returns the job id, or null (a folder
 * store, or a goal never submitted: `goal submit` starts that).
 */
async function requeueSubmitted(store: EventStore, goalId: string): Promise<string | null> {
  const shared = asPostgresStore(store);
  if (!shared) return null;
  const queue = shared.queue();
  const last = (await queue.list()).filter((j) => goalOfJob(j) === goalId).at(-1);
  if (!last) return null;
  const { not_before: _, ...options } = last.options;
  return (await queue.submitGoalTurn(goalId, options, null)).job.jobId;
}
