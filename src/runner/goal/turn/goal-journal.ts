import type { GoalEventBody } from "../../../core/events/goal/goal-events.js";
import type { LoopgateEvent } from "../../../core/events/loopgate-event.js";
import { type GoalState, initialState as initialGoalState } from "../../../core/goal/goal-state-shape.js";
import { TurnLeaseLostError } from "../../../core/goal/turn/turn-lease.js";
import type { EventStore } from "../../../store/kernel/event-store.js";
import { StreamJournal } from "../../stream/stream-journal.js";
import { evolveGoalStream, originOf } from "../goal-engine.js";
import {
  GoalNotFoundError,
  type GoalWriter,
  goalEvents,
  goalStream,
  NeedsRebaseError,
  writeGoalEvents,
  writerOf,
} from "../goal-store.js";

/**
 * Called after each durable goal append with how many events (heartbeats not counted) the goal stream
 * held before it and holds now: fault injection kills the process here in the kill-point tests.
 */
export type AfterGoalAppend = (before: number, after: number) => void;

const counted = (es: readonly { type: string }[]) =>
  es.filter((e) => e.type !== "turn_lease_heartbeat").length;

/** A lost race is decided again this many times before the NeedsRebaseError reaches the caller. */
const REDECIDE = 4;

/**
 * The tick's writer of one goal stream (a StreamJournal): read once, then every append is evolved into the
 * kept state. Each append is decided on the stream as this journal knows it and written at its revision
 * (EventStore expected revision, so SQLite and Postgres alike). A write that lost to another (a person's
 * `todo add` meanwhile) reads what it missed and is decided again, never merged. Appends are serialised
 * so the lease heartbeat and the turn's facts never race each other.
 */
export class GoalJournal {
  private readonly journal: StreamJournal<GoalState>;
  /** Set once this process holds the goal's turn lease: every later write requires it still does. */
  private leaseToken: string | null = null;

  constructor(
    store: EventStore,
    private readonly localDir: string,
    readonly goalId: string,
    private readonly clock: () => Date,
    private readonly afterAppend?: AfterGoalAppend,
  ) {
    this.journal = new StreamJournal<GoalState>({
      store,
      stream: goalStream(goalId),
      fold: { initialState: initialGoalState, evolve: evolveGoalStream },
      write: (events, expected) => writeGoalEvents(store, goalId, events, expected as number | "no_stream"),
      isStale: (e) => e instanceof NeedsRebaseError,
      retries: REDECIDE,
    });
  }

  /**
   * From now on, every append is decided only while the goal's lease is this token's: after a takeover
   * (this process was too slow, its lease expired) the write is refused with TurnLeaseLostError, even when
   * the re-read would let the decision through.
   */
  requireLease(token: string): void {
    this.leaseToken = token;
  }

  /** Reads the stream again; returns the folded state. A goal that does not exist is an error naming the store. */
  async refresh(): Promise<GoalState> {
    const state = await this.journal.read();
    if (this.journal.events.length === 0) throw new GoalNotFoundError(this.goalId, this.localDir);
    return state;
  }

  get log(): { events: readonly LoopgateEvent[]; revision: number } {
    return { events: this.journal.events, revision: this.journal.revision };
  }

  /** The goal as this journal knows it: read once, every own append folded in. */
  get state(): GoalState {
    return this.journal.state;
  }

  /**
   * Decides on the current state and appends the result in ONE write; an empty decision writes nothing.
   * Returns the state after it. On a stale revision it reads again and decides again (a few times).
   * `writer`: true or `{ by }` when the events are a person's command (their origin says so, and meta.by
   * who), false when they are loopgate's own.
   */
  append(decide: (s: GoalState) => GoalEventBody[], writer: GoalWriter = false): Promise<GoalState> {
    const { byOperator, by } = writerOf(writer);
    return this.journal.serially(async () => {
      let before = 0;
      const appended = await this.journal.appendNow((current) => {
        // Counted on the stream the decision is made on (after any re-read of another's events).
        before = counted(this.journal.events);
        if (this.leaseToken !== null && current.lease?.owner.token !== this.leaseToken)
          throw new TurnLeaseLostError(this.goalId, current.lease);
        return goalEvents(decide(current), (t) => originOf(t, byOperator), this.clock, by);
      });
      if (appended.length > 0) this.afterAppend?.(before, counted(this.journal.events));
      return this.journal.state;
    });
  }
}
