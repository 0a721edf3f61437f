import type { RunStatus } from "../../core/events/loopgate-event.js";

// Every exit code of the CLI, in one place (docs/reference/cli.md, exit codes).

/** 0 SUCCESS, 1 ESCALATED, 2 TOOL_FAILURE or bad input. */
export const EXIT_SUCCESS = 0;
export const EXIT_ESCALATED = 1;
export const EXIT_FAILURE = 2;
/** Bad input of any kind (flags, task files, arguments): the same code as TOOL_FAILURE. */
export const EXIT_BAD_INPUT = EXIT_FAILURE;
/** `loopgate status` of a run that has no verdict yet (running, or its process died: resume it). */
export const EXIT_NOT_FINISHED = 3;
/** A second Ctrl-C: quit at once, as a shell reports SIGINT. */
export const EXIT_INTERRUPTED = 130;

/** A run's verdict as an exit code: 0 SUCCESS, 1 ESCALATED, 2 TOOL_FAILURE (or anything unknown). */
export function exitCodeOf(status: RunStatus | string): number {
  return status === "SUCCESS" ? EXIT_SUCCESS : status === "ESCALATED" ? EXIT_ESCALATED : EXIT_FAILURE;
}
