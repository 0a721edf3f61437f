import { ResumeCondition, TODO_STATUSES } from "../events/goal/goal-events.js";
import { InputError } from "../kernel/errors.js";
import type { GoalState, TodoState } from "./goal-state-shape.js";

/**
 * The lifecycle rules both the decider and the fold check: what a validation receipt must match, when
 * a dependency counts as resolved, when a resume condition holds.
 */

/** The todo a chain of supersedes ends in (itself when not superseded). */
export function replacementOf(state: GoalState, id: string): TodoState | undefined {
  let t = state.todos[id];
  const seen = new Set<string>();
  while (t?.supersededBy && !seen.has(t.id)) {
    seen.add(t.id);
    t = state.todos[t.supersededBy];
  }
  return t;
}

/**
 * A dependency is resolved when it (or the replacement it was superseded by) is done with evidence, an
 * approval, or a no_followup rationale. A rejected or cancelled gate does not resolve what depends on it.
 */
export function dependencyResolved(state: GoalState, id: string): boolean {
  const t = replacementOf(state, id);
  if (t?.status !== "done") return false;
  if (t.class === "user_gate") return t.decision === "approved";
  return true;
}

/** Whether a resume condition holds at `now`. */
export function conditionHolds(state: GoalState, cond: ResumeCondition, now: Date): boolean {
  switch (cond.kind) {
    case "at":
      return now.getTime() >= Date.parse(cond.at);
    case "todo_status":
      return state.todos[cond.todo_id]?.status === cond.status;
    case "gate_decision": {
      const g = state.todos[cond.gate_id];
      if (!g || g.decision === null) return false;
      return cond.decision === "any" || g.decision === cond.decision;
    }
  }
}

/** A deferred todo whose resume condition holds now: a derived candidate; reopening stays explicit. */
export function isResumeCandidate(state: GoalState, todo: TodoState, now: Date): boolean {
  return (
    todo.status === "deferred" && todo.resumeWhen !== null && conditionHolds(state, todo.resumeWhen, now)
  );
}

/**
 * Parses a `--until COND`: `at:ISO-TIME` (or a bare ISO time), `todo:TODO_ID=STATUS`,
 * `gate:GATE_ID=approved|rejected|cancelled|any`. Anything else is refused, naming the forms.
 */
export function parseResumeCondition(text: string, where = "--until"): ResumeCondition {
  const t = text.trim();
  const forms = "at:2026-12-01T12:00:00Z, todo:todo_x=done, or gate:todo_y=approved";
  let raw: unknown;
  const m = /^(at|todo|gate):(.*)$/.exec(t);
  if (!m) raw = { kind: "at", at: t };
  else if (m[1] === "at") raw = { kind: "at", at: m[2] };
  else {
    const [id, value] = (m[2] ?? "").split("=");
    raw =
      m[1] === "todo"
        ? { kind: "todo_status", todo_id: id, status: value }
        : { kind: "gate_decision", gate_id: id, decision: value };
  }
  const parsed = ResumeCondition.safeParse(raw);
  if (!parsed.success)
    throw new InputError(
      `"${text}" is not a machine-readable resume condition; write ${forms} (a todo status is one of ${TODO_STATUSES.join("|")})`,
      where,
    );
  return parsed.data;
}

/** A condition as the CLI writes it (the inverse of parseResumeCondition). */
export function formatResumeCondition(cond: ResumeCondition): string {
  switch (cond.kind) {
    case "at":
      return `at:${cond.at}`;
    case "todo_status":
      return `todo:${cond.todo_id}=${cond.status}`;
    case "gate_decision":
      return `gate:${cond.gate_id}=${cond.decision}`;
  }
}
