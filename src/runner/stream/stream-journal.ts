import type { LoopgateEvent } from "../../core/events/loopgate-event.js";
import { ConcurrencyError } from "../../core/kernel/errors.js";
import type { EventStore, ExpectedRevision } from "../../store/kernel/event-store.js";

/** How one stream's events fold into its state (a kernel Decider's `initialState` and `evolve`). */
export interface StreamFold<State> {
  initialState(): State;
  evolve(state: State, event: LoopgateEvent): State;
}

export interface StreamJournalOptions<State> {
  store: EventStore;
  stream: string;
  fold: StreamFold<State>;
  /**
   * Writes the decided events at `expected` and returns the stream's last revision; a stale `expected`
   * throws (see `isStale`). Default: the store's append.
   */
  write?: (events: readonly LoopgateEvent[], expected: ExpectedRevision) => Promise<number>;
  /** Whether a write's error means "the stream moved on": read the new events and decide again. */
  isStale?: (error: unknown) => boolean;
  /** How many times a decision that lost to another writer is decided again (0: the error is thrown). */
  retries?: number;
  /** Told of every appended batch once it is durable, in append order. */
  sink?: (events: readonly LoopgateEvent[]) => void;
}

/** A decision: the events to append on this state (none: nothing is written). */
export type Decide<State> = (state: State) => LoopgateEvent[];

/**
 * The writer of one stream: read once, then folded incrementally — every appended event is evolved into
 * the kept state, never re-folded from scratch. Each append is decided on the current state and written
 * at the revision that state was folded to (the store's expected revision, so SQLite and Postgres alike);
 * one that lost to another writer reads the events it missed and is decided again, a bounded number of
 * times, never merged. Appends are serialised, so a heartbeat timer never races a command.
 */
export class StreamJournal<State> {
  private folded: State;
  private readonly recorded: LoopgateEvent[] = [];
  private rev = -1;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: StreamJournalOptions<State>) {
    this.folded = options.fold.initialState();
  }

  get stream(): string {
    return this.options.stream;
  }

  /** The state of every event this journal has seen, folded. */
  get state(): State {
    return this.folded;
  }

  /** The events this journal has seen, in stream order (the same array, growing). */
  get events(): LoopgateEvent[] {
    return this.recorded;
  }

  /** The stream's last revision as this journal knows it (-1: none). */
  get revision(): number {
    return this.rev;
  }

  /** Reads the whole stream again and folds it from the initial state; returns the state. */
  async read(): Promise<State> {
    const events = await this.options.store.readStream(this.options.stream);
    this.recorded.length = 0;
    this.folded = this.options.fold.initialState();
    this.rev = -1;
    this.take(events);
    return this.folded;
  }

  /** Continues from events already read (a resume): they are folded, new ones append after them. */
  load(events: readonly LoopgateEvent[], revision = events.length - 1): void {
    this.take(events);
    this.rev = revision;
  }

  /** Decides on the current state and appends the result in ONE write, after every earlier append. */
  append(decide: Decide<State>): Promise<LoopgateEvent[]> {
    return this.serially(() => this.appendNow(decide));
  }

  /** Runs `work` after every earlier append or serial work has settled (whatever its outcome). */
  serially<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * `append` without waiting for its turn: only inside `serially`, for work that must make more than one
   * append with nothing in between. Returns the appended events ([] when the decision was empty).
   */
  async appendNow(decide: Decide<State>): Promise<LoopgateEvent[]> {
    const retries = this.options.retries ?? 0;
    const isStale = this.options.isStale ?? ((e: unknown) => e instanceof ConcurrencyError);
    for (let tries = 0; ; tries++) {
      const events = decide(this.folded);
      if (events.length === 0) return [];
      const expected: ExpectedRevision = this.rev < 0 ? "no_stream" : this.rev;
      let last: number;
      try {
        last = await this.write(events, expected);
      } catch (e) {
        if (!isStale(e) || tries >= retries) throw e;
        await this.catchUp();
        continue;
      }
      this.take(events);
      this.rev = last;
      this.options.sink?.(events);
      return events;
    }
  }

  /** Reads only the events after the known revision (another writer's) and folds them in. */
  private async catchUp(): Promise<void> {
    const events = await this.options.store.readStream(this.options.stream, { fromRevision: this.rev + 1 });
    this.take(events);
  }

  private write(events: readonly LoopgateEvent[], expected: ExpectedRevision): Promise<number> {
    if (this.options.write) return this.options.write(events, expected);
    return this.options.store.append(this.options.stream, events, expected).then((r) => r.lastRevision);
  }

  private take(events: readonly LoopgateEvent[]): void {
    const { evolve } = this.options.fold;
    for (const e of events) {
      this.folded = evolve(this.folded, e);
      this.recorded.push(e);
    }
    const last = events.at(-1) as { revision?: number } | undefined;
    if (typeof last?.revision === "number") this.rev = last.revision;
  }
}
