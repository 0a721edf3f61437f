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

const UNITS: Record<string, number> = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/** Parses an age such as `30m`, `12h`, `7d`, `2w` (a unit is required; `0s` means "any age"); null when malformed. */
export function parseAge(text: string): number | null {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([smhdw])\s*$/.exec(text);
  if (!m) return null;
  return Math.round(Number(m[1]) * (UNITS[m[2] as string] as number));
}

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
