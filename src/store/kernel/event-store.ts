import type { LoopgateEvent, RecordedEvent } from "../../core/events/loopgate-event.js";
import type { ContentStore } from "./content-store.js";

/**
 * What the writer believes the stream's last revision is. Revisions start at 0.
 * - a number: the stream's last event has exactly this revision
 * - "no_stream": the stream must not exist yet
 * - "stream_exists": the stream must already have at least one event
 * - "any": no check
 */
export type ExpectedRevision = number | "no_stream" | "stream_exists" | "any";

/** The outcome of an append. `appended` is 0 when the call was an idempotent retry. */
export interface AppendResult {
  /** Revision of the stream's last event after the append. */
  lastRevision: number;
  appended: number;
}

/** One stream's summary, for listings. */
export interface StreamInfo {
  stream: string;
  lastRevision: number;
  firstAt: string;
  lastAt: string;
}

export interface ReadStreamOptions {
  fromRevision?: number;
  limit?: number;
}

export interface ReadAllOptions {
  /** Global position to start from (inclusive); positions increase with every append. */
  fromPosition?: number;
  limit?: number;
}

export interface ListStreamsOptions {
  prefix?: string;
  limit?: number;
}

/**
 * The durable event log. Every implementation passes `test/store/event-store-contract.ts`.
 * Events are validated against the schema on write and on read; a conflicting append throws
 * `ConcurrencyError`; appending events whose ids are all already stored, identical and in the same
 * order in the same stream (even if the stream has moved on since), is an idempotent retry that
 * writes nothing; any other reuse of an id is refused.
 */
export interface EventStore {
  append(stream: string, events: readonly LoopgateEvent[], expected: ExpectedRevision): Promise<AppendResult>;
  readStream(stream: string, options?: ReadStreamOptions): Promise<RecordedEvent[]>;
  readAll(options?: ReadAllOptions): Promise<RecordedEvent[]>;
  listStreams(options?: ListStreamsOptions): Promise<StreamInfo[]>;
  close(): Promise<void>;
  /**
   * A store shared beyond this machine (PostgreSQL) also keeps what a resume needs besides events: the
   * observations and content-addressed blobs runs record. Absent for a store beside its run folders
   * (SQLite), whose runs keep them in the run folder.
   */
  content?(): ContentStore;
}
