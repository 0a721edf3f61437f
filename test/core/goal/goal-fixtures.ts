/** Shared builders for the goal tests: a goal spec, todos, receipts and the events they fold from. */

import type {
  GoalEventBody,
  TodoSpec,
  ValidationReceipt,
} from "../../../src/core/events/goal/goal-events.js";
import type { GoalSpec } from "../../../src/core/goal/goal-decider.js";

export const GOAL = "goal_csv";
export const REV0 = "rev0000";

export const task = (name: string) => ({ path: `tasks/${name}.yaml`, task_id: name, digest: `sha-${name}` });

export const adv = (id: string, extra: Partial<TodoSpec> = {}): TodoSpec => ({
  id,
  content: `do ${id}`,
  class: "advancement_task",
  task: task(id),
  ...extra,
});
export const gate = (id: string, scope: string, extra: Partial<TodoSpec> = {}): TodoSpec => ({
  id,
  content: `decide ${scope}`,
  class: "user_gate",
  decision_scope: scope,
  ...extra,
});
export const monitor = (id: string): TodoSpec => ({
  id,
  content: `watch ${id}`,
  class: "continuous_monitor",
  monitor: { argv: ["true"], cadence_seconds: 60, timeout_seconds: 10 },
});

export const spec = (todos: TodoSpec[] = [], extra: Partial<GoalSpec> = {}): GoalSpec => ({
  goalId: GOAL,
  objective: "csvcol handles quoted fields",
  acceptance: [{ id: "acc_all", kind: "task", ref: "tasks/acceptance.yaml", digest: "sha-acceptance" }],
  workspace: { path: "/goals/goal_csv/workspace", initial_revision: REV0 },
  agent: { agent_id: "agent_main", kind: "agent", model: "scripted:model.yaml" },
  budget: { window_seconds: 86_400, turns_per_window: 10 },
  todos,
  ...extra,
});

/** The events `create_goal` emits for `s` (written out, not computed by the decider). */
export const created = (s: GoalSpec = spec()): GoalEventBody[] => [
  {
    type: "goal_created",
    data: {
      goal_id: s.goalId,
      objective: s.objective,
      acceptance: s.acceptance,
      workspace: s.workspace,
      agent: s.agent,
      budget: s.budget,
    },
  },
  ...s.todos.map((todo): GoalEventBody => ({ type: "todo_added", data: { todo, successor_of: null } })),
];

export const receipt = (taskName: string, extra: Partial<ValidationReceipt> = {}): ValidationReceipt => ({
  run_id: `run_${taskName}`,
  task_id: taskName,
  task_digest: `sha-${taskName}`,
  status: "SUCCESS",
  envelope_digest: `env-${taskName}`,
  goal_id: GOAL,
  goal_revision: REV0,
  ...extra,
});

export const completed = (id: string, extra: Partial<ValidationReceipt> = {}): GoalEventBody => ({
  type: "todo_completed",
  data: { todo_id: id, receipt: receipt(id, extra) },
});
export const approved = (id: string): GoalEventBody => ({
  type: "gate_decided",
  data: { todo_id: id, decision: "approved", note: "" },
});
export const revision = (previous: string, rev: string): GoalEventBody => ({
  type: "goal_revision_recorded",
  data: { revision: rev, previous, reason: "accepted change" },
});
export const accepted = (rev: string, extra: Partial<ValidationReceipt> = {}): GoalEventBody => ({
  type: "acceptance_receipt_recorded",
  data: {
    acceptance_id: "acc_all",
    receipt: receipt("acceptance", { run_id: `run_acc_${rev}`, goal_revision: rev, ...extra }),
  },
});

/** The goal agent's route, read against acceptance version `version` (a vision checkpoint). */
export const visionRecorded = (version = 0, agent = "agent_main", rev = REV0): GoalEventBody => ({
  type: "vision_recorded",
  data: {
    agent_id: agent,
    route: "the planned route",
    checkpoint: { goal_revision: rev, acceptance_version: version },
  },
});
