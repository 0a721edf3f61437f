import { ResumeCondition, TODO_ID_PATTERN, type TodoSpec } from "../events/goal/goal-events.js";
import { DomainError } from "../kernel/errors.js";
import type { GoalState, TodoState } from "./goal-state-shape.js";

/** The checks the goal decider's commands share: todo ids, todo specs, resume conditions. */

export const fail = (message: string): never => {
  throw new DomainError(message);
};

export function need(state: GoalState, id: string, cmd: string): TodoState {
  if (!TODO_ID_PATTERN.test(id))
    fail(`${cmd}: "${id}" is not a todo id (todo_ followed by 3 to 64 characters of [a-z0-9_-])`);
  return state.todos[id] ?? fail(`${cmd}: no todo ${id} in goal ${state.goalId}`);
}

export function checkSpec(state: GoalState, spec: TodoSpec, cmd: string, alsoNew: readonly TodoSpec[] = []) {
  if (!TODO_ID_PATTERN.test(spec.id))
    fail(`${cmd}: "${spec.id}" is not a todo id (todo_ followed by 3 to 64 characters of [a-z0-9_-])`);
  if (state.todos[spec.id]) fail(`${cmd}: todo ${spec.id} already exists (ids are never reused)`);
  const known = (id: string) => state.todos[id] !== undefined || alsoNew.some((t) => t.id === id);
  if (spec.class === "advancement_task" && !spec.task)
    fail(`${cmd}: ${spec.id} is an advancement_task and needs a task (its SUCCESS is the only evidence)`);
  if (spec.class === "user_gate" && !spec.decision_scope && !spec.global_gate)
    fail(`${cmd}: ${spec.id} is a user_gate and needs a decision_scope (or global_gate: true)`);
  if (spec.class !== "user_gate" && (spec.decision_scope || spec.global_gate))
    fail(`${cmd}: ${spec.id}: decision_scope and global_gate belong to a user_gate, not a ${spec.class}`);
  if (spec.class === "continuous_monitor" && !spec.monitor)
    fail(`${cmd}: ${spec.id} is a continuous_monitor and needs a monitor poll with a cadence`);
  for (const d of spec.depends_on ?? []) {
    if (d === spec.id) fail(`${cmd}: ${spec.id} cannot depend on itself`);
    if (!known(d)) fail(`${cmd}: ${spec.id} depends on ${d}, which is not a todo of the goal`);
  }
  if (spec.unblocks_todo_id && !known(spec.unblocks_todo_id))
    fail(`${cmd}: ${spec.id} unblocks ${spec.unblocks_todo_id}, which is not a todo of the goal`);
  // A scope no user_gate decides would hold the todo back forever: refused, as the goal file refuses it.
  // A goal-wide gate's decision_scope is its label, not a scope it decides (gates.ts scopeWaits).
  const scopes = new Set(
    [
      ...Object.values(state.todos).flatMap((t) => (t.globalGate ? [] : [t.decisionScope])),
      ...[...alsoNew, spec].flatMap((t) => (t.global_gate ? [] : [t.decision_scope])),
    ].flatMap((scope) => (scope ? [scope] : [])),
  );
  for (const s of spec.required_decision_scopes ?? [])
    if (!scopes.has(s))
      fail(
        `${cmd}: rule scope_needs_gate: ${spec.id} requires the decision scope ${s}, which no user_gate of the goal covers; declared scopes: ${[...scopes].join(", ") || "none"} (it would wait forever: add a user_gate deciding ${s} first)`,
      );
}

export function resumeCondition(state: GoalState, raw: unknown, todoId: string, cmd: string) {
  const parsed = ResumeCondition.safeParse(raw);
  if (!parsed.success)
    return fail(
      `${cmd}: rule deferred_needs_resume_when: ${todoId} cannot be deferred without a machine-readable resume_when (a time, a todo status or a gate decision)`,
    );
  const c = parsed.data;
  const ref = c.kind === "todo_status" ? c.todo_id : c.kind === "gate_decision" ? c.gate_id : null;
  if (ref !== null) {
    if (ref === todoId) fail(`${cmd}: ${todoId}'s resume_when cannot wait on itself`);
    const t = state.todos[ref] ?? fail(`${cmd}: resume_when names ${ref}, which is not a todo of the goal`);
    if (c.kind === "gate_decision" && t.class !== "user_gate")
      fail(`${cmd}: resume_when waits on a gate decision of ${ref}, which is a ${t.class}, not a user_gate`);
  }
  return c;
}
