import {
  type EventType,
  isRunStreamEvent,
  type LoopgateEvent,
  type Origin,
  type RunStreamEvent,
  stampOrigin,
} from "../../core/events/loopgate-event.js";
import { boundText } from "../../core/kernel/bounded.js";
import { CorruptEventError, LoopgateError } from "../../core/kernel/errors.js";
import { type NamedSecret, redactDeep, secretRedactor } from "../../core/kernel/redact.js";
import {
  decide,
  type EventBody,
  evolve,
  initialState,
  type RunCommand,
  type RunState,
} from "../../core/run/run-decider.js";
import {
  decideLease,
  evolveLease,
  isLeaseEvent,
  type Lease,
  type LeaseCommand,
} from "../../core/run/run-lease.js";
import type { EventStore } from "../../store/kernel/event-store.js";
import { StreamJournal } from "./stream-journal.js";

/**
 * Called after each append of a run's events is durable, with how many of the run's events the log
 * then holds (lease events not counted: they depend on how long the run takes). The CLI sets one for
 * its crash-and-resume fault injection (faultInjection in cli/commands/fault-injection.ts); a run works the same without one.
 */
export type AfterAppend = (runEvents: number) => void;

/** A run's state and its lease, folded together from the one stream. */
interface RunStream {
  run: RunState;
  lease: Lease | null;
}

/** A run's stream holds only a run's events: any other kind there is corruption, never skipped. */
function asRunStreamEvent(e: LoopgateEvent): RunStreamEvent {
  if (!isRunStreamEvent(e))
    throw new CorruptEventError(`a run's stream cannot hold a ${JSON.stringify(e.type)}`);
  return e;
}

const runStreamFold = {
  initialState: (): RunStream => ({ run: initialState(), lease: null }),
  evolve: (s: RunStream, e: LoopgateEvent): RunStream => ({
    run: evolve(s.run, asRunStreamEvent(e)),
    lease: evolveLease(s.lease, e),
  }),
};

/**
 * The write side of one run (a StreamJournal): every command goes through the decider, and its events are
 * appended (with the expected revision) before the runner acts on them. Appends are serialised, so the
 * lease's heartbeat timer can never race a command for the same revision; a lost race is an error here,
 * never decided again (a run has one writer, its lease holder). Every string of every event is
 * redacted here first (see core/kernel/redact.ts): the one door to the log, so no output excerpt, claim,
 * gate log or reason can carry a known secret past it, and the envelope is projected from these events.
 */
export class RunJournal {
  private readonly journal: StreamJournal<RunStream>;
  private readonly redact: ((s: string) => string) | null;

  constructor(
    readonly store: EventStore,
    readonly runId: string,
    private readonly clock: () => Date,
    private readonly newId: () => string,
    secrets: readonly NamedSecret[] = [],
    private readonly afterAppend?: AfterAppend,
  ) {
    this.redact = secrets.length ? secretRedactor(secrets) : null;
    this.journal = new StreamJournal({ store, stream: RunJournal.stream(runId), fold: runStreamFold });
  }

  /** A journal that continues a stored run: its events are folded, new ones append after them. */
  static resume(
    store: EventStore,
    runId: string,
    events: readonly LoopgateEvent[],
    clock: () => Date,
    newId: () => string,
    secrets: readonly NamedSecret[] = [],
    afterAppend?: AfterAppend,
  ): RunJournal {
    const j = new RunJournal(store, runId, clock, newId, secrets, afterAppend);
    j.journal.load(events, events.length - 1);
    return j;
  }

  /** The stream name of a run. */
  static stream(runId: string): string {
    return `run-${runId}`;
  }

  /** The run's events as this journal knows them (the same array, growing with every append). */
  get events(): LoopgateEvent[] {
    return this.journal.events;
  }

  get current(): RunState {
    return this.journal.state.run;
  }

  /** The run's lease as this journal last saw it. */
  get lease(): Lease | null {
    return this.journal.state.lease;
  }

  /**
   * Decides, appends, then folds. Throws if the store refuses (e.g. a concurrent writer). With `lease`,
   * the lease's events go into the same atomic append (a run is never started without an owner). An
   * event the log's schema refuses (nothing was written) stops the run instead: TOOL_FAILURE with a short
   * reason of loopgate's own, then the verdict, both appended, and a RunStoppedError for the driver.
   */
  record(command: RunCommand, origin: Origin = "runtime", lease?: LeaseCommand): Promise<LoopgateEvent[]> {
    return this.journal.serially(async () => {
      const state = this.current;
      const bodies = decide(command, state);
      const withLease = lease ? [...bodies, ...decideLease(lease, this.lease)] : bodies;
      let events: LoopgateEvent[];
      try {
        events = await this.append(withLease, origin);
      } catch (e) {
        if (!(e instanceof CorruptEventError) || !state.started || state.finished) throw e;
        const types = [...new Set(bodies.map((b) => b.type))].join(", ");
        const reason = boundText(
          `loopgate could not record ${types}: ${e.message}; the run stops here (a loopgate bug: please report it)`,
          1000,
        );
        if (!this.current.infrastructure)
          await this.append(decide({ type: "fail_infrastructure", reason }, this.current), "runtime");
        await this.append(decide({ type: "finish_run" }, this.current), "runtime");
        throw new RunStoppedError(reason, { cause: e });
      }
      this.afterAppend?.(this.events.filter((e) => !isLeaseEvent(e)).length);
      return events;
    });
  }

  /** Takes or renews the run's lease (see core/run/run-lease.ts); throws LeaseHeldError or LeaseLostError. */
  recordLease(command: LeaseCommand): Promise<LoopgateEvent[]> {
    return this.journal.serially(() => this.append(decideLease(command, this.lease), "runtime"));
  }

  /** Redacts, stamps and appends decided bodies in one write (inside the journal's serial turn). */
  private append(decided: readonly (EventBody | { type: EventType; data: unknown })[], origin: Origin) {
    const redact = this.redact;
    const bodies = redact ? decided.map((b) => ({ ...b, data: redactDeep(b.data, redact) })) : decided;
    return this.journal.appendNow(() => {
      const at = this.clock().toISOString();
      return bodies.map(
        (b) =>
          ({ ...b, id: this.newId(), meta: { at, origin: stampOrigin(b.type, origin) } }) as LoopgateEvent,
      );
    });
  }
}

/** The run was stopped and its verdict recorded because an event could not be; the driver finishes on it. */
export class RunStoppedError extends LoopgateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("run_stopped", message, options);
  }
}
