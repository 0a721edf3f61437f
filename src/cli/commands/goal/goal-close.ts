import { CLOSURE_OUTCOMES, type ClosureOutcome } from "../../../core/events/goal/goal-events.js";
import { InputError } from "../../../core/kernel/errors.js";
import type { GoalIntent } from "../../../runner/goal/goal-engine.js";

/** Flags of `loopgate goal close`. */
export interface CloseFlags {
  rationale?: string;
  outcome?: string;
  blocker?: string;
  revision?: string;
}

/**
 * `goal close`'s closure intent: achieved (default), or an honest negative citing its evidence — blocked
 * (--blocker TODO, a todo whose blocker was accepted), rolled_back (--revision REV, a compensated
 * revision), not_achieved (every acceptance item ran on the current revision). The goal decider checks
 * the evidence; closure recomputes it on every read.
 */
export function closeIntent(rationale: string, flags: CloseFlags): GoalIntent {
  const outcome = (flags.outcome ?? "achieved") as ClosureOutcome;
  if (!(CLOSURE_OUTCOMES as readonly string[]).includes(outcome))
    throw new InputError(
      `${JSON.stringify(flags.outcome)} is not a closure outcome; one of ${CLOSURE_OUTCOMES.join(", ")}`,
      "--outcome",
    );
  if (flags.blocker !== undefined && outcome !== "blocked")
    throw new InputError("--blocker goes with --outcome blocked", "--blocker");
  if (flags.revision !== undefined && outcome !== "rolled_back")
    throw new InputError("--revision goes with --outcome rolled_back", "--revision");
  if (outcome === "blocked" && flags.blocker === undefined)
    throw new InputError(
      "goal close --outcome blocked needs --blocker TODO (the verified blocker)",
      "--blocker",
    );
  if (outcome === "rolled_back" && flags.revision === undefined)
    throw new InputError(
      "goal close --outcome rolled_back needs --revision REV (the reverted revision)",
      "--revision",
    );
  if (outcome === "achieved" && flags.outcome === undefined) return { kind: "close_goal", rationale };
  const cites = flags.blocker ?? flags.revision;
  return {
    kind: "command",
    command: { type: "declare_no_followup", rationale, outcome, ...(cites !== undefined ? { cites } : {}) },
  };
}

/** What `goal close` prints once the intent is recorded. */
export function closeSentence(
  goalId: string,
  closed: boolean,
  outcome: string,
  gaps: readonly string[],
): string {
  if (!closed)
    return `no_followup recorded (${outcome}); goal ${goalId} is not closed yet: ${gaps.slice(0, 3).join("; ")}`;
  return outcome === "achieved"
    ? `goal ${goalId} is closed: every frontier item is proved`
    : `goal ${goalId} is closed as ${outcome} (an honest negative, not achieved): every other frontier item is proved`;
}
