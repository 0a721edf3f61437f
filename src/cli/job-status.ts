import type { JobSummary } from "../store/run-queue-view.js";
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
