import type { RecordedEvent } from "../../../core/events.js";
import type { GoalEventBody, GoalState } from "../../../core/goal/index.js";
import { TurnLeaseLostError } from "../../../core/goal/turn/index.js";
import type { EventStore } from "../../../store/event-store.js";
import { goalState, originOf } from "../goal-engine.js";
import { appendGoal, NeedsRebaseError, readGoal } from "../goal-store.js";

/**
 * Called after each durable goal append with how many events (heartbeats not counted) the goal stream
 * held before it and holds now: fault injection kills the process here in the kill-point tests.
 */
export type AfterGoalAppend = (before: number, after: number) => void;

const counted = (es: readonly { type: string }[]) =>
  es.filter((e) => e.type !== "turn_lease_heartbeat").length;

/**
 * The tick's writer of one goal stream: every append is decided on the stream as last read and written
 * at its revision (EventStore expected revision, so SQLite and Postgres alike). A write that lost to
 * another (a person's `todo add` meanwhile) is read again and decided again, never merged. Appends are
 * serialised so the lease heartbeat and the turn's facts never race each other.
 */
export class GoalJournal {
  private events: RecordedEvent[] = [];
  private revision = -1;
  private chain: Promise<unknown> = Promise.resolve();
  /** Set once this process holds the goal's turn lease: every later write requires it still does. */
  private leaseToken: string | null = null;

  constructor(
    private readonly store: EventStore,
    private readonly storeDir: string,
    readonly goalId: string,
    private readonly clock: () => Date,
    private readonly afterAppend?: AfterGoalAppend,
  ) {}

  /**
   * From now on, every append is decided only while the goal's lease is this token's: after a takeover
   * (this process was too slow, its lease expired) the write is refused with TurnLeaseLostError, even when
   * the re-read would let the decision through.
   */
  requireLease(token: string): void {
    this.leaseToken = token;
  }

  /** Reads the stream again; returns the folded state. */
  async refresh(): Promise<GoalState> {
    const log = await readGoal(this.store, this.storeDir, this.goalId);
    this.events = log.events;
    this.revision = log.revision;
    return goalState(this.events);
  }

  get log(): { events: readonly RecordedEvent[]; revision: number } {
    return { events: this.events, revision: this.revision };
  }

  get state(): GoalState {
    return goalState(this.events);
  }

  /**
   * Decides on the current state and appends the result in ONE write; an empty decision writes nothing.
   * Returns the state after it. On a stale revision it reads again and decides again (a few times).
   * `byOperator`: the events are a person's command (their origin says so), not loopgate's own.
   */
  append(decide: (s: GoalState) => GoalEventBody[], byOperator = false): Promise<GoalState> {
    const next = this.chain.then(() => this.appendNow(decide, byOperator));
    this.chain = next.catch(() => {});
    return next;
  }

  private async appendNow(
    decide: (s: GoalState) => GoalEventBody[],
    byOperator: boolean,
  ): Promise<GoalState> {
    for (let tries = 0; ; tries++) {
      const current = goalState(this.events);
      if (this.leaseToken !== null && current.lease?.owner.token !== this.leaseToken)
        throw new TurnLeaseLostError(this.goalId, current.lease);
      const bodies = decide(current);
      if (bodies.length === 0) return goalState(this.events);
      const before = counted(this.events);
      try {
        await appendGoal(
          this.store,
          this.goalId,
          bodies,
          this.revision,
          (t) => originOf(t, byOperator),
          this.clock,
        );
      } catch (e) {
        if (!(e instanceof NeedsRebaseError) || tries >= 4) throw e;
        await this.refresh();
        continue;
      }
      const state = await this.refresh();
      this.afterAppend?.(before, counted(this.events));
      return state;
    }
  }
}
