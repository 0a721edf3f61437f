import type { RecordedEvent } from "../core/events/loopgate-event.js";
import type { EventStore } from "../store/kernel/event-store.js";
import type { JobSummary } from "../store/open-store.js";

/**
 * What the board reads beside the log through the CLI's own readers, handed down by the command that
 * starts it (serve/ sits below cli/, as selftest/ does): the run queue as `runs` and `status` show it, a
 * run owner's line as `status` prints it, an event's line as `events` prints it, and the doctor's report.
 * The board re-derives none of these facts; it only lays them out.
 */
export interface BoardReaders {
  /** The queue's jobs (`runs`, `status`): null for a store without a queue (a folder store). */
  queue(store: EventStore): Promise<{ jobs: JobSummary[]; byRun: Map<string, JobSummary> } | null>;
  /** A job's status word and its line, as `runs` prints them. */
  jobWord(job: JobSummary): string;
  jobLine(job: JobSummary): string;
  /** Who drives an unfinished run and what to do if nobody does (`status`'s owner line). */
  ownerLine(events: readonly RecordedEvent[]): string;
  /** One event as `loopgate events` prints it. */
  eventLine(event: RecordedEvent): string;
  /** `loopgate doctor`'s report of this machine and store. */
  doctor(): Promise<DoctorView>;
}

/** The doctor's report as the board shows it (the shape `loopgate doctor --json` prints). */
export interface DoctorView {
  checks: {
    id: string;
    need: string;
    state: "ok" | "missing" | "skipped";
    detail: string;
    remedy: string | null;
  }[];
  exit: number;
  verdict: string;
}
