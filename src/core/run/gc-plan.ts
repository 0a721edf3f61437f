import { durationProblem, parseDuration } from "../kernel/duration.js";
import type { RunPhase } from "./run-phase.js";

/** What `loopgate gc` knows of one run, read from its log. */
export interface GcRun {
  runId: string;
  phase: RunPhase;
  /** When its first event was recorded (ISO). */
  startedAt: string;
  /** When run_finished was recorded (ISO), null while it has none. */
  finishedAt: string | null;
}

/** Which runs to keep whatever their age, and how old a finished run must be to go. */
export interface GcPolicy {
  olderThanMs: number;
  keep: number;
}

/** The decision on one run, with the reason a person reads. */
export interface GcDecision {
  runId: string;
  remove: boolean;
  why: string;
}

/**
 * The oldest age `gc --older-than` accepts, 100 years: larger than any real store's history, small
 * enough that "now minus the age" is still a valid date here and a valid timestamp in PostgreSQL.
 */
export const MAX_AGE_MS = 36_500 * 86_400_000;

/**
 * Parses an age with the one duration grammar (`90s`, `30m`, `12h`, `7d`, `2w`): a unit is required and
 * `0s` means "any age"; null when malformed or over MAX_AGE_MS.
 */
export function parseAge(text: string): number | null {
  return parseDuration(text, AGE);
}

/** Why `text` is not an age, or null when it is one. */
export function ageProblem(text: string): string | null {
  return durationProblem(text, AGE);
}

const AGE = { unitRequired: true, zeroAllowed: true, maxMs: MAX_AGE_MS } as const;

/**
 * Decides, for every run, whether `gc` may remove its folder. Only a run with a final verdict can go:
 * one without (running, or crashed and resumable) or interrupted (resume continues it from its folder)
 * is always kept, and so are the `keep` most recently started runs and runs finished less than
 * `olderThanMs` before `now`. Pure: the same runs, policy and time give the same decisions.
 */
export function planGc(runs: readonly GcRun[], policy: GcPolicy, now: Date): GcDecision[] {
  const newestFirst = [...runs].sort(
    (a, b) => Date.parse(b.startedAt) - Date.parse(a.startedAt) || b.runId.localeCompare(a.runId),
  );
  return newestFirst.map((r, i) => {
    if (r.phase === "running")
      return { runId: r.runId, remove: false, why: "no verdict in its log (running, or resumable)" };
    if (r.phase === "interrupted")
      return {
        runId: r.runId,
        remove: false,
        why: "interrupted: `loopgate resume` continues it from its folder",
      };
    if (i < policy.keep)
      return { runId: r.runId, remove: false, why: `among the ${policy.keep} most recent runs` };
    const finished = Date.parse(r.finishedAt ?? "");
    if (!Number.isFinite(finished))
      return { runId: r.runId, remove: false, why: "its finish time cannot be read" };
    if (now.getTime() - finished < policy.olderThanMs)
      return { runId: r.runId, remove: false, why: "finished too recently" };
    return { runId: r.runId, remove: true, why: "finished" };
  });
}
