// The goal-turn checks of the kill campaign: after a killed `goal tick` and the tick that settles it, the
// turn's side effects each happened exactly once. Pure functions over the goal stream and the commits
// git reports, so a test can hand them a doubled spend or a completion without writeback.
import type { LoggedEvent } from "./log-checks.js";

/** The turn a campaign kills: its key (the Loopgate-Turn trailer), instance id and the todo it works. */
export interface TurnRef {
  /** `GOAL/AGENT/INSTANCE`, as in the quota spend and the commit trailer. */
  key: string;
  instance: string;
  todo: string;
}

/** How often each once-per-turn fact is in the log (commits: those git shows with the turn's trailer). */
export interface TurnCounts {
  commits: number;
  writebacks: number;
  completions: number;
  spends: number;
  turn_spends: number;
  acks: number;
}

const instanceOf = (e: LoggedEvent) =>
  (e.data as { identity?: { turn_instance_id?: string } }).identity?.turn_instance_id;

export function turnCounts(
  goalEvents: readonly LoggedEvent[],
  commits: readonly string[],
  t: TurnRef,
): TurnCounts {
  const of = (type: string, pred: (e: LoggedEvent) => boolean) =>
    goalEvents.filter((e) => e.type === type && pred(e)).length;
  const mine = (e: LoggedEvent) => instanceOf(e) === t.instance;
  return {
    commits: new Set(commits).size,
    writebacks: of("turn_writeback_accepted", mine),
    completions: of("todo_completed", (e) => (e.data as { todo_id?: string }).todo_id === t.todo),
    spends: of("quota_spent", (e) => (e.data as { turn_id?: string }).turn_id === t.key),
    turn_spends: of("turn_quota_spent", mine),
    acks: of("turn_scheduler_acked", mine),
  };
}

const WHAT: Record<keyof TurnCounts, string> = {
  commits: "commits with the Loopgate-Turn trailer",
  writebacks: "accepted writebacks (turn_writeback_accepted)",
  completions: "completions of the todo (todo_completed)",
  spends: "quota spends keyed by the turn (quota_spent)",
  turn_spends: "turn quota spends (turn_quota_spent)",
  acks: "scheduler ACKs (turn_scheduler_acked)",
};

export interface TurnProblems {
  /** A once-per-turn fact found more than once: a doubled side effect. */
  doubled: string[];
  /** A fact a settled turn must have and has not (the turn did not settle). */
  missing: string[];
  /** The todo completed without the turn's change written back and committed. */
  unwritten: string[];
}

/** Every once-per-turn fact exactly once, and no completion without its writeback and commit. */
export function turnProblems(counts: TurnCounts, t: TurnRef): TurnProblems {
  const out: TurnProblems = { doubled: [], missing: [], unwritten: [] };
  for (const k of Object.keys(WHAT) as (keyof TurnCounts)[]) {
    if (counts[k] > 1) out.doubled.push(`turn ${t.key}: ${counts[k]} ${WHAT[k]}, must be 1`);
    else if (counts[k] === 0) out.missing.push(`turn ${t.key}: no ${WHAT[k]}`);
  }
  if (counts.completions > 0 && (counts.writebacks === 0 || counts.commits === 0))
    out.unwritten.push(
      `todo ${t.todo} completed, but turn ${t.key} has ${counts.writebacks} writeback(s) and ${counts.commits} trailer commit(s)`,
    );
  return out;
}

/**
 * The commits whose Loopgate-Turn trailer is exactly `key`, from the lines of
 * `git log --format='%H %(trailers:key=Loopgate-Turn,valueonly)'`.
 */
export function trailerCommits(gitLog: string, key: string): string[] {
  return gitLog
    .split("\n")
    .map((l) => l.trim().split(/\s+/))
    .filter(([, v]) => v === key)
    .map(([h]) => h as string);
}
