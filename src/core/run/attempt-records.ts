import type { EventData, PathList } from "../events/loopgate-event.js";
import { boundText, cleanPath, LIMITS } from "../kernel/bounded.js";
import { isHedgedClaim } from "../kernel/hedge.js";

/** Paths listed one by one in a `workspace_changed` list; `total` counts them all. */
export const MAX_LISTED_PATHS = 200;

/**
 * The event data of an attempt's facts, built from what a builder, a gate or a model produced: every
 * string from outside is bounded here (head and tail kept, the cut said), so no output, log, claim
 * or path can make an append fail its schema.
 */

/** A changed-paths list: the first MAX_LISTED_PATHS paths, cleaned, and the total. */
export function pathList(paths: readonly string[]): PathList {
  return { paths: paths.slice(0, MAX_LISTED_PATHS).map(cleanPath), total: paths.length };
}

/** What the builder printed and how it ended: its output bounded, mostly its end. */
export function builderRecord(
  attempt: number,
  r: {
    exitCode: number | null;
    signal: string | null;
    timedOut: boolean;
    durationMs: number;
    output: string;
  },
): EventData<"builder_finished"> {
  return {
    attempt,
    exit_code: r.exitCode,
    signal: r.signal === null ? null : boundText(r.signal, 100),
    timed_out: r.timedOut,
    duration_ms: r.durationMs,
    output_excerpt: boundText(r.output, LIMITS.excerpt, { head: 0.1 }),
  };
}

/** The builder's last words as a claim (never evidence), or null when it said nothing. */
export function claimRecord(attempt: number, said: string): EventData<"claim_recorded"> | null {
  const text = said.trim();
  if (!text) return null;
  const bounded = boundText(text, 2000, { head: 0.25 });
  return { attempt, origin: "model", text: bounded, hedged: isHedgedClaim(bounded) };
}

/** A gate run's record: its log (mostly its end), summary and tamper note bounded. */
export function gateRunRecord(data: EventData<"gate_run_finished">): EventData<"gate_run_finished"> {
  return {
    ...data,
    log_excerpt: boundText(data.log_excerpt, LIMITS.excerpt, { head: 0.1 }),
    summary: boundText(data.summary, LIMITS.detail),
    ...(data.tamper
      ? {
          tamper: {
            ...data.tamper,
            note: data.tamper.note === null ? null : boundText(data.tamper.note, LIMITS.note),
          },
        }
      : {}),
  };
}

/** A finding with its detail bounded and its path cleaned. */
export function findingRecord(f: EventData<"finding_recorded">): EventData<"finding_recorded"> {
  return {
    ...f,
    ...(f.path !== undefined ? { path: cleanPath(f.path) } : {}),
    detail: boundText(f.detail, LIMITS.detail),
  };
}
