import { isTrusted, type LoopgateEvent } from "../events/loopgate-event.js";
import type { GoalPredicate } from "../task/task.js";

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
 * Which evidence a goal is judged on. `runtimeCommands`: an external agent's own runtime reports
 * (agent_tool_observed, origin agent_runtime: Claude Code's PostToolUse, Codex's command items) may
 * satisfy a `command_succeeded` predicate, unless marked `confirmed: false` (a hook report Claude Code's
 * own stream does not hold). They are not loopgate's records: docs/guides/claude-code.md says what that
 * trust means. Gates and files are never taken from them.
 */
export interface GoalEvidence {
  runtimeCommands?: boolean;
}

/** The shell tools of the external agents whose reported runs may count for a command predicate. */
const RUNTIME_SHELLS = new Set(["Bash", "command_execution"]);
/** Their tools that change the workspace; a later call of one makes an earlier command's success stale. */
const RUNTIME_WRITERS = new Set(["Edit", "Write", "MultiEdit", "NotebookEdit", "file_change"]);

/** A command run as the window records it: loopgate's bash tool, or (when allowed) an agent's shell. */
function commandRun(
  e: LoopgateEvent,
  runtime: boolean,
): { command: string; ok: boolean; callId: string | null } | null {
  if (e.type === "tool_call_finished" && e.data.name === "bash" && e.data.valid && isTrusted(e.meta.origin))
    return {
      command: e.data.subject.trim(),
      ok: !e.data.is_error && e.data.exit_code === 0,
      callId: e.data.call_id,
    };
  // A report its runtime's own record did not confirm (confirmed: false) is no run of anything.
  if (runtime && e.type === "agent_tool_observed" && RUNTIME_SHELLS.has(e.data.tool))
    return e.data.confirmed === false
      ? null
      : { command: e.data.command.trim(), ok: e.data.exit_code === 0, callId: null };
  return null;
}

/** Whether `e`, after a command's success, may have changed the workspace that success was about. */
function changesWork(e: LoopgateEvent, run: { command: string; callId: string | null }, runtime: boolean) {
  if (e.type === "workspace_touched" && isTrusted(e.meta.origin)) return e.data.call_id !== run.callId;
  if (!runtime || e.type !== "agent_tool_observed") return false;
  // An unconfirmed report still makes a success stale: doubt never helps a goal hold.
  // Without a workspace observation per call, any other shell command might have written: stale.
  if (RUNTIME_SHELLS.has(e.data.tool)) return e.data.command.trim() !== run.command;
  return RUNTIME_WRITERS.has(e.data.tool);
}

/**
 * Whether one predicate holds on trusted evidence inside the window (events after the goal was set,
 * in log order). A command counts only if it is exactly the predicate's command, exited 0, and no later
 * tool call changed the workspace (with runtime evidence: no later write tool or other shell command);
 * gate and file predicates count only from loopgate's own probes at the end of this turn.
 */
export function predicateHolds(
  p: GoalPredicate,
  window: readonly LoopgateEvent[],
  turn: number,
  evidence: GoalEvidence = {},
): boolean {
  const runtime = evidence.runtimeCommands === true;
  if ("command_succeeded" in p) {
    // The exact command, not a substring: `echo node --test`, `node --test || true` or a pipe into
    // `tail` (whose exit code wins) would otherwise pass for the tests.
    const want = p.command_succeeded.trim();
    for (let i = window.length - 1; i >= 0; i--) {
      const e = window[i];
      const run = e ? commandRun(e, runtime) : null;
      if (!run?.ok || run.command !== want) continue;
      return !window.slice(i + 1).some((x) => changesWork(x, run, runtime));
    }
    return false;
  }
  const trusted = window.filter((e) => isTrusted(e.meta.origin));
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
  evidence: GoalEvidence = {},
): GoalEvaluation {
  const unmet = predicates
    .filter((p) => !predicateHolds(p, window, turn, evidence))
    .map((p) => describePredicate(p));
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
