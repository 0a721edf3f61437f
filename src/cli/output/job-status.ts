import type { JobSummary } from "../../store/open-store.js";
import { EXIT_ESCALATED, EXIT_FAILURE, EXIT_NOT_FINISHED, EXIT_SUCCESS, exitCodeOf } from "./exit-codes.js";

// What `status JOB` and `runs` say of a queued job that has no run to show (none started, or none at
// all: a refused job, a goal turn), so the word printed and the exit code always tell the same thing.

/**
 * The job's status word: its queue state while it is not finished (QUEUED, CLAIMED, RUNNING, EXPIRED),
 * else the first word it finished with (REFUSED, SUCCESS, GOAL_TURN, …; `?` when none was recorded).
 */
export function jobStatusWord(j: JobSummary): string {
  if (j.state !== "finished") return j.state.toUpperCase();
  return /^[A-Z_]+/.exec(j.status ?? "")?.[0] ?? "?";
}

/**
 * The exit code of `status JOB` for such a job: 3 while it is not finished; once finished, a run status
 * as the run's (0 SUCCESS, 1 ESCALATED, 2 otherwise: REFUSED is a bad task, i.e. bad input), a goal
 * turn as `goal tick` exits (0 advanced or terminal, 2 failed, 1 anything else).
 */
export function jobExitCode(j: JobSummary): number {
  if (j.state !== "finished") return EXIT_NOT_FINISHED;
  const word = jobStatusWord(j);
  if (word !== "GOAL_TURN") return exitCodeOf(word);
  const kind = /^GOAL_TURN (\w+)/.exec(j.status ?? "")?.[1];
  if (kind === "advanced" || kind === "terminal") return EXIT_SUCCESS;
  // Waiting, throttled, busy, idle, stopped: `goal tick` exits 1 for these, the code ESCALATED has.
  return kind === "failed" ? EXIT_FAILURE : EXIT_ESCALATED;
}

/** The hand-back history in words: `; handed back 2 time(s), last by w-1 at …: <reason>`, or "". */
function handBackNote(j: JobSummary): string {
  const h = j.handed_back;
  if (!h) return "";
  return `; handed back ${h.times} time(s), last by ${h.last_worker} at ${h.last_at}: ${h.last_reason}`;
}

/** Lost claims in words while the job is not dead-lettered: `; 2 lost claim(s) (lease expired)`, or "". */
function lostNote(j: JobSummary): string {
  return j.lost_claims && !j.dead_letter ? `; ${j.lost_claims} lost claim(s) (lease expired)` : "";
}

/** One line for people: `running on w-1 (lease until …)`, `queued since …`. */
export function jobLine(j: JobSummary): string {
  const holder = `${j.worker}${j.worker_stale ? " (stale: its heartbeat is overdue)" : ""}`;
  const tail = `(job ${j.job_id}${lostNote(j)}${handBackNote(j)})`;
  switch (j.state) {
    case "queued":
      return `queued since ${j.submitted_at} ${tail}`;
    case "claimed":
      return `claimed by ${holder}, run not started yet, lease until ${j.lease_expires_at} ${tail}`;
    case "running":
      return `running on ${holder}, lease until ${j.lease_expires_at} ${tail}`;
    case "expired":
      return `lease of ${j.worker} expired at ${j.lease_expires_at}; the next worker takes it over ${tail}`;
    case "finished":
      return `finished: ${j.status ?? "?"}${j.dead_letter ? ` (dead letter: ${j.dead_letter})` : ""} (job ${j.job_id}, ${j.claims} claim(s)${lostNote(j)}${handBackNote(j)})`;
  }
}
