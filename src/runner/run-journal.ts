import { boundText } from "../core/bounded.js";
import { CorruptEventError, LoopgateError } from "../core/errors.js";
import type { EventType, LoopgateEvent, Origin } from "../core/events.js";
import { type NamedSecret, redactDeep, secretRedactor } from "../core/redact.js";
import {
  decide,
  type EventBody,
  evolve,
  initialState,
  type RunCommand,
  type RunState,
} from "../core/run-decider.js";
import { decideLease, evolveLease, isLeaseEvent, type Lease, type LeaseCommand } from "../core/run-lease.js";
import type { EventStore } from "../store/event-store.js";

/** Event types whose origin is fixed by what they are, whatever the caller passes. */
const ORIGIN_OF: Partial<Record<EventType, Origin>> = {
  claim_recorded: "model",
  model_responded: "model",
  gate_run_finished: "gate",
  continuation_queued: "continuation",
  judge_finished: "judge",
  agent_tool_observed: "agent_runtime",
  agent_session_finished: "agent_runtime",
};

/**
 * The write side of one run: every command goes through the decider, and its events are appended
 * (with the expected revision) before the runner acts on them. Appends are serialised, so the lease's
 * heartbeat timer can never race a command for the same revision. Every string of every event is
 * redacted here first (see core/redact.ts): the one door to the log, so no output excerpt, claim,
 * gate log or reason can carry a known secret past it, and the envelope is projected from these events.
 */
export class RunJournal {
  private state: RunState = initialState();
  private leaseState: Lease | null = null;
  private revision = -1;
  private queue: Promise<unknown> = Promise.resolve();
  readonly events: LoopgateEvent[] = [];
  private readonly redact: ((s: string) => string) | null;

  constructor(
    readonly store: EventStore,
    readonly runId: string,
    private readonly clock: () => Date,
    private readonly newId: () => string,
    secrets: readonly NamedSecret[] = [],
  ) {
    this.redact = secrets.length ? secretRedactor(secrets) : null;
  }

  /** A journal that continues a stored run: its events are folded, new ones append after them. */
  static resume(
    store: EventStore,
    runId: string,
    events: readonly LoopgateEvent[],
    clock: () => Date,
    newId: () => string,
    secrets: readonly NamedSecret[] = [],
  ): RunJournal {
    const j = new RunJournal(store, runId, clock, newId, secrets);
    for (const e of events) j.fold(e);
    j.revision = events.length - 1;
    return j;
  }

  /** The stream name of a run. */
  static stream(runId: string): string {
    return `run-${runId}`;
  }

  get current(): RunState {
    return this.state;
  }

  /** The run's lease as this journal last saw it. */
  get lease(): Lease | null {
    return this.leaseState;
  }

  /**
   * Decides, appends, then folds. Throws if the store refuses (e.g. a concurrent writer). With `lease`,
   * the lease's events go into the same atomic append (a run is never started without an owner). An
   * event the log's schema refuses (nothing was written) stops the run instead: TOOL_FAILURE with a short
   * reason of loopgate's own, then the verdict, both appended, and a RunStoppedError for the driver.
   */
  record(command: RunCommand, origin: Origin = "runtime", lease?: LeaseCommand): Promise<LoopgateEvent[]> {
    return this.serially(async () => {
      const bodies = decide(command, this.state);
      const withLease = lease ? [...bodies, ...decideLease(lease, this.leaseState)] : bodies;
      let events: LoopgateEvent[];
      try {
        events = await this.append(withLease, origin);
      } catch (e) {
        if (!(e instanceof CorruptEventError) || !this.state.started || this.state.finished) throw e;
        const types = [...new Set(bodies.map((b) => b.type))].join(", ");
        const reason = boundText(
          `loopgate could not record ${types}: ${e.message}; the run stops here (a loopgate bug: please report it)`,
          1000,
        );
        if (!this.state.infrastructure)
          await this.append(decide({ type: "fail_infrastructure", reason }, this.state), "runtime");
        await this.append(decide({ type: "finish_run" }, this.state), "runtime");
        throw new RunStoppedError(reason, { cause: e });
      }
      crashForTests(this.events.filter((e) => !isLeaseEvent(e)).length);
      return events;
    });
  }

  /** Takes or renews the run's lease (see core/run-lease.ts); throws LeaseHeldError or LeaseLostError. */
  recordLease(command: LeaseCommand): Promise<LoopgateEvent[]> {
    return this.serially(() => this.append(decideLease(command, this.leaseState), "runtime"));
  }

  private async append(decided: readonly (EventBody | { type: EventType; data: unknown })[], origin: Origin) {
    const redact = this.redact;
    const bodies = redact ? decided.map((b) => ({ ...b, data: redactDeep(b.data, redact) })) : decided;
    const at = this.clock().toISOString();
    const events = bodies.map(
      (b) => ({ ...b, id: this.newId(), meta: { at, origin: ORIGIN_OF[b.type] ?? origin } }) as LoopgateEvent,
    );
    const expected = this.revision < 0 ? "no_stream" : this.revision;
    const result = await this.store.append(RunJournal.stream(this.runId), events, expected);
    this.revision = result.lastRevision;
    for (const e of events) this.fold(e);
    return events;
  }

  private fold(e: LoopgateEvent): void {
    this.state = evolve(this.state, e);
    this.leaseState = evolveLease(this.leaseState, e);
    this.events.push(e);
  }

  private serially<T>(work: () => Promise<T>): Promise<T> {
    const next = this.queue.then(work, work);
    this.queue = next.catch(() => undefined);
    return next;
  }
}

/** The run was stopped and its verdict recorded because an event could not be; the driver finishes on it. */
export class RunStoppedError extends LoopgateError {
  constructor(message: string, options?: { cause?: unknown }) {
    super("run_stopped", message, options);
  }
}

/**
 * Fault injection for the crash-and-resume tests: with LOOPGATE_FAULT_KILL_AFTER_EVENTS=N the process
 * kills itself (SIGKILL, no clean-up) right after the run's N-th event is durably appended (lease events
 * are not counted: they depend on how long the run takes).
 */
function crashForTests(count: number): void {
  const at = process.env.LOOPGATE_FAULT_KILL_AFTER_EVENTS;
  if (at !== undefined && Number(at) === count) process.kill(process.pid, "SIGKILL");
}
