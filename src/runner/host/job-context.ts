import type { PostgresEventStore } from "../../store/postgres/postgres-event-store.js";
import type { Claim, PostgresRunQueue } from "../../store/postgres/run-queue.js";
import type { RunFaults, RunKit } from "./run-flags.js";

/** What a worker gives the job it drives: the claim, the queue and store, this machine's folder, the time left. */
export interface JobContext {
  claim: Claim;
  queue: PostgresRunQueue;
  store: PostgresEventStore;
  /** The store's URL: a run job's runs record it as their store. */
  url: string;
  leaseMs: number;
  /** Aborted when the worker interrupts the job (a second stop request, a lost lease, a lost database). */
  signal: AbortSignal;
  /** A line about the job for the worker's user (a lease wait, a goal turn's progress). */
  note: (line: string) => void;
  /** A run's warning (a builder's, the sandbox's), for the worker's user. */
  warn: (text: string) => void;
  /** This worker's folder (--work-dir); undefined: the default beside the job's cwd. */
  workDir: string | undefined;
  kit: RunKit;
  faults: RunFaults;
  /** The clock (ms since the epoch) and the sleep of lease waits; a sleep ends early when `signal` aborts. */
  now: () => number;
  sleep: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** A kind of job: drives one claimed job to the status the queue records. */
export type JobRunner = (ctx: JobContext) => Promise<{ status: string }>;
