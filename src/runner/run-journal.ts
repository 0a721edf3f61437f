import { boundText } from "../core/bounded.js";
import { CorruptEventError, LoopgateError } from "../core/errors.js";
import type { EventType, LoopgateEvent, Origin } from "../core/events.js";
import {
  decide,
  type EventBody,
  evolve,
  initialState,
  type RunCommand,
  type RunState,
} from "../core/run-decider.js";
import type { EventStore } from "../store/event-store.js";

/** Event types whose origin is fixed by what they are, whatever the caller passes. */
const ORIGIN_OF: Partial<Record<EventType, Origin>> = {
  claim_recorded: "model",
  model_responded: "model",
  gate_run_finished: "gate",
  continuation_queued: "continuation",
  judge_finished: "judge",
};

/**
 * The write side of one run: every command goes through the decider, and its events are appended
 * (with the expected revision) before the runner acts on them.
 */
export class RunJournal {
  private state: RunState = initialState();
  private revision = -1;
  readonly events: LoopgateEvent[] = [];

  constructor(
    readonly store: EventStore,
    readonly runId: string,
    private readonly clock: () => Date,
    private readonly newId: () => string,
  ) {}

  /** A journal that continues a stored run: its events are folded, new ones append after them. */
  static resume(
    store: EventStore,
    runId: string,
    events: readonly LoopgateEvent[],
    clock: () => Date,
    newId: () => string,
  ): RunJournal {
    const j = new RunJournal(store, runId, clock, newId);
    for (const e of events) {
      j.state = evolve(j.state, e);
      j.events.push(e);
    }
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

  /**
   * Decides, appends, then folds. Throws if the store refuses (e.g. a concurrent writer). An event the
   * log's schema refuses (nothing was written) stops the run instead: TOOL_FAILURE with a short reason
   * of loopgate's own, then the verdict, both appended, and a RunStoppedError for the driver to finish on.
   */
  async record(command: RunCommand, origin: Origin = "runtime"): Promise<LoopgateEvent[]> {
    const bodies = decide(command, this.state);
    try {
      return await this.append(bodies, origin);
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
  }

  private async append(bodies: EventBody[], origin: Origin): Promise<LoopgateEvent[]> {
    const at = this.clock().toISOString();
    const events = bodies.map(
      (b) => ({ ...b, id: this.newId(), meta: { at, origin: ORIGIN_OF[b.type] ?? origin } }) as LoopgateEvent,
    );
    const expected = this.revision < 0 ? "no_stream" : this.revision;
    const result = await this.store.append(RunJournal.stream(this.runId), events, expected);
    this.revision = result.lastRevision;
    for (const e of events) {
      this.state = evolve(this.state, e);
      this.events.push(e);
    }
    crashForTests(this.events.length);
    return events;
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
 * kills itself (SIGKILL, no clean-up) right after the run's N-th event is durably appended.
 */
function crashForTests(count: number): void {
  const at = process.env.LOOPGATE_FAULT_KILL_AFTER_EVENTS;
  if (at !== undefined && Number(at) === count) process.kill(process.pid, "SIGKILL");
}
