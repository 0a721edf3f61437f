import { durationProblem, parseDuration } from "../kernel/duration.js";
import { InputError } from "../kernel/errors.js";
import { type ResolvedLimits, resolveLimits } from "./limits.js";
import type { Task } from "./task.js";

/**
 * A task's settings as the phases of a run use them: durations in milliseconds, limits in bytes. Made
 * once, when the task loads (runner/task-source/load-task.ts), so no phase re-reads the file's strings or restates a
 * default; the defaults themselves are named once, in core/task/task.ts (the schema's) and core/task/limits.ts.
 */
export interface ResolvedTask {
  builder: {
    /** `builder.timeout`: how long an external builder or the oracle may run. */
    timeoutMs: number;
  };
  /** `limits:`, every default filled in. */
  limits: ResolvedLimits;
  /** `budget.wall_time` (the built-in agent's run-wide cap); null when the task sets none. */
  wallTimeMs: number | null;
  /** `judge.timeout`; null when the task has no judge. */
  judgeTimeoutMs: number | null;
}

/**
 * Resolves a parsed task. The schema has already refused a bad value with its file:line:field message;
 * a task built some other way is refused here, naming the file and the field, never given a default
 * in its place.
 */
export function resolveTask(task: Task, file: string): ResolvedTask {
  const ms = (value: string | number, field: string): number => {
    const parsed = parseDuration(value);
    if (parsed !== null) return parsed;
    throw new InputError(
      `expected a duration such as "30s", "500ms", "5m", "2h", "1d" or a number of seconds (${durationProblem(value)})`,
      `${file}: ${field}`,
    );
  };
  return {
    builder: { timeoutMs: ms(task.builder.timeout, "builder.timeout") },
    limits: resolveLimits(task.limits, file),
    wallTimeMs: task.budget.wall_time === undefined ? null : ms(task.budget.wall_time, "budget.wall_time"),
    judgeTimeoutMs: task.judge === undefined ? null : ms(task.judge.timeout, "judge.timeout"),
  };
}
