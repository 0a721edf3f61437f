import { z } from "zod";

// One grammar for every duration loopgate reads (task and goal files, experiment manifests, CLI flags
// such as `worker --lease` and `gc --older-than`), so `1d` means the same thing everywhere.

const DAY_MS = 86_400_000;

/** What each unit is worth in milliseconds. */
const UNITS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: DAY_MS,
  w: 7 * DAY_MS,
};

/**
 * The longest duration loopgate accepts, 365 days: far beyond any real timeout or budget, yet a
 * deadline computed from it (now + duration) is always a valid date. Timers that wait longer than
 * setTimeout's own limit re-arm (see long-timer.ts), so everything up to this one really waits.
 */
export const MAX_DURATION_MS = 365 * DAY_MS;

/** How strict one place is about durations. */
export interface DurationOptions {
  /** A bare number is refused (an age on the command line, where "7" would be ambiguous). */
  unitRequired?: boolean;
  /** Zero is a duration (`gc --older-than 0s`: any age); elsewhere a duration is positive. */
  zeroAllowed?: boolean;
  /** The largest value accepted, in milliseconds (default MAX_DURATION_MS). */
  maxMs?: number;
}

/** A number of milliseconds in the largest unit that states it exactly ("365d", "90m", "1500ms"). */
export function formatDuration(ms: number): string {
  for (const unit of ["w", "d", "h", "m", "s"]) {
    const size = UNITS[unit] as number;
    if (ms >= size && ms % size === 0) return `${ms / size}${unit}`;
  }
  return `${ms}ms`;
}

type Read = { ms: number } | { problem: string; limit?: number };

function read(value: string | number, options: DurationOptions): Read {
  const shown = JSON.stringify(value);
  let ms: number;
  if (typeof value === "number") {
    if (options.unitRequired || !Number.isFinite(value)) return { problem: `not a duration: ${shown}` };
    ms = Math.round(value * 1000);
  } else {
    const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)?\s*$/.exec(value);
    if (!m || (options.unitRequired && m[2] === undefined)) return { problem: `not a duration: ${shown}` };
    ms = Math.round(Number(m[1]) * (UNITS[m[2] ?? "s"] as number));
  }
  if (ms < 0 || (ms === 0 && !options.zeroAllowed)) return { problem: `not a positive duration: ${shown}` };
  const max = options.maxMs ?? MAX_DURATION_MS;
  if (ms > max) return { problem: `${shown} is longer than the limit of ${formatDuration(max)}`, limit: max };
  return { ms };
}

/**
 * Parses "500ms", "30s", "5m", "1h", "7d", "2w" or a bare number of seconds into milliseconds; null
 * when malformed, not positive, or longer than the limit (MAX_DURATION_MS unless `options.maxMs`).
 */
export function parseDuration(value: string | number, options: DurationOptions = {}): number | null {
  const r = read(value, options);
  return "ms" in r ? r.ms : null;
}

/** Why `value` is not a duration (malformed, not positive, over the limit), or null when it is one. */
export function durationProblem(value: string | number, options: DurationOptions = {}): string | null {
  const r = read(value, options);
  return "problem" in r ? r.problem : null;
}

/**
 * A duration field of a task, goal or manifest file: a string with a unit, or a number of seconds.
 * A malformed value and one over the limit each get their own message (the file's loader adds file:line).
 */
export const DurationField = z.union([z.string(), z.number()]).superRefine((v, ctx) => {
  const r = read(v, {});
  if ("ms" in r) return;
  ctx.addIssue({
    code: "custom",
    message:
      r.limit !== undefined
        ? `expected a duration of at most ${formatDuration(r.limit)}, got ${JSON.stringify(v)}`
        : 'expected a duration such as "30s", "500ms", "5m", "2h", "1d" or a number of seconds',
  });
});
