import { randomUUID } from "node:crypto";
import type { LoopgateEvent, RecordedEvent } from "../../core/events/loopgate-event.js";
import { ConcurrencyError, LoopgateError } from "../../core/kernel/errors.js";
import type { EventStore } from "../../store/kernel/event-store.js";

// The goal stream: one per goal, written only through guarded commands with an expected revision.

/** The stream name of a goal. */
export const goalStream = (goalId: string) => `goal-${goalId}`;

/** A write whose expected revision is not the stream's: nothing was written; read again and decide again. */
export class NeedsRebaseError extends LoopgateError {
  readonly goalId: string;
  readonly expected: number | "no_stream";
  readonly current: number;
  constructor(goalId: string, expected: number | "no_stream", current: number) {
    super(
      "needs_rebase",
      `needs_rebase: goal ${goalId} is at revision ${current}, not ${expected === "no_stream" ? "(new)" : expected}; nothing was written. Read it again (loopgate goal status ${goalId}) and retry with --expect-revision ${current}`,
    );
    this.goalId = goalId;
    this.expected = expected;
    this.current = current;
  }
}

/** No such goal in the store. */
export class GoalNotFoundError extends LoopgateError {
  constructor(goalId: string, localDir: string) {
    super("goal_not_found", `no goal ${goalId} in ${localDir}; \`loopgate goals\` lists the goals it holds`);
  }
}

/** A goal's events and the stream's last revision. */
export interface GoalLog {
  events: RecordedEvent[];
  revision: number;
}

/** Reads a goal's stream; a goal that does not exist is an error naming the store. */
export async function readGoal(store: EventStore, localDir: string, goalId: string): Promise<GoalLog> {
  const events = await store.readStream(goalStream(goalId));
  if (events.length === 0) throw new GoalNotFoundError(goalId, localDir);
  return { events, revision: events.at(-1)?.revision ?? -1 };
}

/** The ids of every goal in the store. */
export async function listGoalIds(store: EventStore): Promise<string[]> {
  const streams = await store.listStreams({ prefix: "goal-" });
  return streams.map((s) => s.stream.slice("goal-".length)).sort();
}

/**
 * Who makes a goal write: a person (true; `{ by }` when their name is known, recorded as meta.by of the
 * write's operator-origin events) or loopgate itself (false).
 */
export type GoalWriter = boolean | { by: string | undefined };

/** A writer as the append needs it: whether a person writes, and their name when known. */
export function writerOf(w: GoalWriter): { byOperator: boolean; by: string | undefined } {
  return typeof w === "object" ? { byOperator: true, by: w.by } : { byOperator: w, by: undefined };
}

/** Body of an event as a decider emits it; the writer adds id and meta. */
export interface EventBodyOf {
  type: string;
  data: unknown;
}

/**
 * The stored events of decided bodies: each gets an id, the time and its origin; `by` (who made a person's
 * write) goes on the operator-origin ones only, never on a runtime fact appended with them.
 */
export function goalEvents(
  bodies: readonly EventBodyOf[],
  origin: (type: string) => "operator" | "runtime",
  clock: () => Date = () => new Date(),
  by?: string,
): LoopgateEvent[] {
  const at = clock().toISOString();
  return bodies.map((b) => {
    const o = origin(b.type);
    return {
      id: randomUUID(),
      type: b.type,
      data: b.data,
      meta: { at, origin: o, ...(by !== undefined && o === "operator" ? { by } : {}) },
    } as LoopgateEvent;
  });
}

/**
 * Writes a goal's stored events at `expected`: on a shared store the task files they name are snapshotted
 * into the store first (see goal-tasks.ts); a stale expectation is a NeedsRebaseError with the current
 * revision, never a merge. Returns the stream's last revision.
 */
export async function writeGoalEvents(
  store: EventStore,
  goalId: string,
  events: readonly LoopgateEvent[],
  expected: number | "no_stream",
): Promise<number> {
  // The task files the events name go into a shared store first, so no host meets a task it cannot get.
  // Loaded here, not with this module: reading a goal (every status or events command) loads no task code.
  const { snapshotGoalTasks } = await import("./goal-tasks.js");
  await snapshotGoalTasks(store, goalId, events);
  try {
    return (await store.append(goalStream(goalId), events, expected)).lastRevision;
  } catch (e) {
    if (e instanceof ConcurrencyError) throw new NeedsRebaseError(goalId, expected, e.actual);
    throw e;
  }
}

/**
 * Appends decided events to the goal stream at `expected` (the revision the decision was made on);
 * a stale expectation is a NeedsRebaseError with the current revision, never a merge. On a shared store,
 * the task files the events name are snapshotted into the store before the append (see goal-tasks.ts).
 * `by`: who made a person's write (meta.by of its operator-origin events).
 */
export async function appendGoal(
  store: EventStore,
  goalId: string,
  bodies: readonly EventBodyOf[],
  expected: number | "no_stream",
  origin: (type: string) => "operator" | "runtime",
  clock: () => Date = () => new Date(),
  by?: string,
): Promise<number> {
  return writeGoalEvents(store, goalId, goalEvents(bodies, origin, clock, by), expected);
}
