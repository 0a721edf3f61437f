import { isTrusted, type LoopgateEvent } from "./events.js";
import type { GoalPredicate } from "./task.js";

/** A predicate in one line: `command_succeeded: node --test`. */
export function describePredicate(p: Readonly<GoalPredicate> | Readonly<Record<string, string>>): string {
  const [k, v] = Object.entries(p)[0] ?? ["?", "?"];
  return `${k}: ${v}`;
}

/** The outcome of the goal gate at the end of a turn. */
export interface GoalEvaluation {
  outcome: "completed" | "continuing" | "blocked";
  unmet: string[];
  reason: string;
}

/**
 * Whether one predicate holds on trusted evidence inside the window (events after the goal was set,
 * in log order). A command counts only if it is exactly the predicate's command, exited 0, and no later
 * tool call changed the workspace;
 * gate and file predicates count only from loopgate's own probes at the end of this turn.
 */
export function predicateHolds(p: GoalPredicate, window: readonly LoopgateEvent[], turn: number): boolean {
  const trusted = window.filter((e) => isTrusted(e.meta.origin));
  if ("command_succeeded" in p) {
    for (let i = trusted.length - 1; i >= 0; i--) {
      const e = trusted[i];
      if (e?.type !== "tool_call_finished" || e.data.name !== "bash" || !e.data.valid) continue;
      // The exact command, not a substring: `echo node --test`, `node --test || true` or a pipe into
      // `tail` (whose exit code wins) would otherwise pass for the tests.
      if (e.data.is_error || e.data.exit_code !== 0 || e.data.subject.trim() !== p.command_succeeded.trim())
        continue;
      const callId = e.data.call_id;
      const stale = trusted
        .slice(i + 1)
        .some((x) => x.type === "workspace_touched" && x.data.call_id !== callId);
      return !stale;
    }
    return false;
  }
  const probe = trusted.findLast(
    (e) => e.type === "goal_probed" && e.data.turn === turn && samePredicate(e.data.predicate, p),
  );
  return probe?.type === "goal_probed" && probe.data.holds;
}

/** The same gate or file predicate (command predicates are never probed). */
function samePredicate(a: GoalPredicate, b: GoalPredicate): boolean {
  if ("gate_passed" in b) return "gate_passed" in a && a.gate_passed === b.gate_passed;
  if ("file_exists" in b) return "file_exists" in a && a.file_exists === b.file_exists;
  return false;
}

/** The goal gate: completed when every predicate holds; otherwise continuing until the turn budget, then blocked. */
export function evaluateGoal(
  predicates: readonly GoalPredicate[],
  window: readonly LoopgateEvent[],
  turn: number,
  maxTurns: number,
): GoalEvaluation {
  const unmet = predicates.filter((p) => !predicateHolds(p, window, turn)).map((p) => describePredicate(p));
  if (unmet.length === 0)
    return { outcome: "completed", unmet, reason: `all ${predicates.length} goal predicates hold` };
  if (turn < maxTurns)
    return { outcome: "continuing", unmet, reason: `turn ${turn} of ${maxTurns}: unmet ${unmet.join("; ")}` };
  return {
    outcome: "blocked",
    unmet,
    reason: `turn budget spent (${turn} of ${maxTurns}); unmet ${unmet.join("; ")}`,
  };
}

/** The continuation prompt: tagged as non-evidence, built from the unmet predicates only. */
export function continuationPrompt(unmet: readonly string[]): string {
  return [
    "[loopgate] The goal is not met yet. Still unmet, on loopgate's own evidence:",
    ...unmet.map((u) => `- ${u}`),
    "Keep working. A command counts only when you run exactly that command with the bash tool and it exits 0 after your last change.",
    "This reminder is not evidence of completion.",
  ].join("\n");
}
