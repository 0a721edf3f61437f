import { z } from "zod";
import { declareEvent, type EventArea } from "../../kernel/event-area.js";
import { Timestamp } from "../../kernel/event-parts.js";
import { monitorEvents } from "./monitor-events.js";
import { NotifyTarget, notifyEvents } from "./notify-events.js";
import { replanEvents } from "./replan-events.js";
import { turnEvents, turnLeaseEvents } from "./turn-events.js";
import { ValidationReceipt } from "./validation-receipt.js";

/**
 * The goal stream's events: source facts only. Everything else about a goal (running,
 * handoff states, runtime state, closure, projections) is derived from these and never written.
 * Each type is declared once, as the run's areas are: `{ type: { origin, schema } }` satisfying
 * `EventArea`, its TypeScript type inferred from the schema. The goal area is this file's own types and
 * those of the monitor, replan and governed-turn files; loopgate-event.ts composes it into the one union.
 */

/** The most characters each bounded goal field holds. */
export const GOAL_LIMITS = {
  objective: 8000,
  content: 4000,
  reason: 2000,
  route: 4000,
  patch: 2000,
  name: 200,
  path: 1000,
  list: 200,
} as const;

/** `todo_` and 3 to 64 of `[a-z0-9_-]`. */
export const TODO_ID_PATTERN = /^todo_[a-z0-9_-]{3,64}$/;
export const TodoId = z
  .string()
  .regex(TODO_ID_PATTERN, "a todo id is todo_ followed by 3 to 64 characters of [a-z0-9_-]");
export type TodoId = z.infer<typeof TodoId>;

export const TODO_CLASSES = [
  "advancement_task",
  "continuous_monitor",
  "user_gate",
  "user_action",
  "blocker",
] as const;
export const TodoClass = z.enum(TODO_CLASSES);
export type TodoClass = z.infer<typeof TodoClass>;

/** Exactly four persisted statuses. Running is derived, never stored. */
export const TODO_STATUSES = ["open", "done", "blocked", "deferred"] as const;
export const TodoStatus = z.enum(TODO_STATUSES);
export type TodoStatus = z.infer<typeof TodoStatus>;

export const GateDecision = z.enum(["approved", "rejected", "cancelled"]);
export type GateDecision = z.infer<typeof GateDecision>;

export { Timestamp };

const Name = z.string().min(1).max(GOAL_LIMITS.name);
const Reason = z.string().max(GOAL_LIMITS.reason);
const Revision = z.string().min(1).max(GOAL_LIMITS.name);

/** A machine-checkable resume condition: a time, another todo's status, or a gate's decision. */
export const ResumeCondition = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("at"), at: Timestamp }),
  z.object({ kind: z.literal("todo_status"), todo_id: TodoId, status: TodoStatus }),
  z.object({
    kind: z.literal("gate_decision"),
    gate_id: TodoId,
    decision: z.union([GateDecision, z.literal("any")]),
  }),
]);
export type ResumeCondition = z.infer<typeof ResumeCondition>;

/** The task an advancement (or blocker) todo is proved by: its file and the digest it had when added. */
export const TaskRef = z.object({
  path: z.string().min(1).max(GOAL_LIMITS.path),
  task_id: Name,
  digest: Name,
});
export type TaskRef = z.infer<typeof TaskRef>;

/** One acceptance item: a task file or a gate whose SUCCESS on the goal workspace proves the goal. */
export const AcceptanceItem = z.object({
  id: Name,
  kind: z.enum(["task", "gate"]),
  ref: z.string().min(1).max(GOAL_LIMITS.path),
  digest: Name,
});
export type AcceptanceItem = z.infer<typeof AcceptanceItem>;

/** A continuous monitor's poll (carried for the governed turns). */
export const MonitorSpec = z.object({
  argv: z.array(z.string().max(GOAL_LIMITS.path)).min(1).max(64),
  cadence_seconds: z.number().int().positive(),
  timeout_seconds: z.number().int().positive(),
  expires_at: Timestamp.optional(),
  /** A stop condition: when it holds the monitor completes (with a successor or no_followup). */
  resume_when: ResumeCondition.optional(),
  max_no_change_before_replan: z.number().int().positive().optional(),
  /**
   * The wait after each poll with no material change (no change or failed) grows by `factor`, up to
   * `max_seconds`; a material change (or a person's reopen) resets it to the cadence. Absent (goals recorded
   * before it existed): a fixed cadence.
   */
  backoff: z
    .object({ factor: z.number().min(1).max(10), max_seconds: z.number().int().positive() })
    .optional(),
  /** Failed polls in a row after which the monitor stops polling and is blocked for a person. Absent: 3. */
  max_failures: z.number().int().positive().max(100).optional(),
});
export type MonitorSpec = z.infer<typeof MonitorSpec>;

/** A todo as declared (in the goal file or by `todo add`): its content and its static relations. */
export const TodoSpec = z.object({
  id: TodoId,
  content: z.string().min(1).max(GOAL_LIMITS.content),
  class: TodoClass,
  task: TaskRef.optional(),
  /** A user gate's scope: the decision it covers. */
  decision_scope: Name.optional(),
  /** A user gate that covers every action of the goal. */
  global_gate: z.boolean().optional(),
  /** The decision scopes an action needs approved before it may run or complete. */
  required_decision_scopes: z.array(Name).max(GOAL_LIMITS.list).optional(),
  depends_on: z.array(TodoId).max(GOAL_LIMITS.list).optional(),
  /** A blocker's target: the todo this one unblocks once cleared. */
  unblocks_todo_id: TodoId.optional(),
  monitor: MonitorSpec.optional(),
});
export type TodoSpec = z.infer<typeof TodoSpec>;

/** Quota: turns per window, and lifetime caps on tokens and cost. */
export const Budget = z.object({
  window_seconds: z.number().int().positive(),
  turns_per_window: z.number().int().positive().optional(),
  max_tokens: z.number().int().positive().optional(),
  max_cost_usd: z.number().positive().optional(),
});
export type Budget = z.infer<typeof Budget>;

/** The agent or builder that does the goal's work (the same forms as `loopgate run`). */
export const GoalAgent = z.object({
  agent_id: Name,
  kind: z.enum(["agent", "builder"]),
  model: Name.optional(),
  command: z.string().min(1).max(GOAL_LIMITS.path).optional(),
  /** The goal file's `planner.model` (a scripted/replay file made absolute): the planner turns' model. */
  planner_model: z.string().min(1).max(GOAL_LIMITS.path).optional(),
});
export type GoalAgent = z.infer<typeof GoalAgent>;

/** The goal workspace: a git repository loopgate owns; `initial_revision` is its first commit. */
export const GoalWorkspace = z.object({
  path: z.string().min(1).max(GOAL_LIMITS.path),
  initial_revision: Revision,
});
export type GoalWorkspace = z.infer<typeof GoalWorkspace>;

export { ValidationReceipt } from "./validation-receipt.js";

/** A vision's checkpoint: what the route was read against. */
export const VisionCheckpoint = z.object({
  goal_revision: Revision,
  acceptance_version: z.number().int().nonnegative(),
});
export type VisionCheckpoint = z.infer<typeof VisionCheckpoint>;

const Who = ["operator", "runtime"] as const;

/**
 * How a goal's closure intent says it ends: `achieved` (every acceptance item proved), or an honest
 * negative, never "done": `blocked` (a verified blocker, `cites` names the todo accepted as blocked),
 * `rolled_back` (`cites` names the reverted revision of a recorded compensation), `not_achieved` (a
 * coverage-backed no_followup: every acceptance item ran on the current revision, and not all passed).
 */
export const CLOSURE_OUTCOMES = ["achieved", "blocked", "rolled_back", "not_achieved"] as const;
export const ClosureOutcome = z.enum(CLOSURE_OUTCOMES);
export type ClosureOutcome = z.infer<typeof ClosureOutcome>;

/**
 * A person's evidence for a step only a person takes (a release published, a blocker confirmed): a link, a
 * file (its digest: the content is what was attested), or a goal run's receipt (a blocker only).
 */
export const AttestedEvidence = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("url"), url: z.string().url().max(GOAL_LIMITS.path) }),
  z.object({
    kind: z.literal("file"),
    name: z.string().min(1).max(GOAL_LIMITS.path),
    sha256: z.string().regex(/^[0-9a-f]{64}$/),
    bytes: z.number().int().nonnegative(),
  }),
  z.object({ kind: z.literal("run"), receipt: ValidationReceipt }),
]);
export type AttestedEvidence = z.infer<typeof AttestedEvidence>;

/** The goal area: each event type once, with the origins allowed to write it. */
export const goalEvents = {
  goal_created: declareEvent(["operator"], () =>
    z.object({
      goal_id: Name,
      objective: z.string().min(1).max(GOAL_LIMITS.objective),
      acceptance: z.array(AcceptanceItem).min(1).max(GOAL_LIMITS.list),
      workspace: GoalWorkspace,
      agent: GoalAgent,
      budget: Budget,
      /** The goal file it was created from. */
      source: z.object({ path: z.string().max(GOAL_LIMITS.path), digest: Name }).optional(),
      /** The goal file's `notify:` targets (absent: none). */
      notify: z.array(NotifyTarget).max(16).optional(),
    }),
  ),
  goal_activation_changed: declareEvent(["operator"], () =>
    z.object({ activation: z.enum(["active", "stopped"]), note: Reason }),
  ),
  /** The goal workspace moved to a new git revision (an accepted change was committed). */
  goal_revision_recorded: declareEvent(["runtime"], () =>
    z.object({ revision: Revision, previous: Revision, reason: Reason, turn_id: Name.optional() }),
  ),
  /** The whole new acceptance list; `delta` (absent in older logs) says which item was added or retired. */
  goal_acceptance_changed: declareEvent(["operator", "runtime"], () =>
    z.object({
      acceptance: z.array(AcceptanceItem).min(1).max(GOAL_LIMITS.list),
      reason: Reason,
      delta: z
        .array(z.object({ change: z.enum(["added", "retired"]), item_id: Name }))
        .max(GOAL_LIMITS.list)
        .optional(),
    }),
  ),
  goal_budget_changed: declareEvent(["operator"], () => z.object({ budget: Budget, reason: Reason })),
  /** The structured no_followup intent terminal closure needs. Any todo added later voids it. */
  goal_no_followup_declared: declareEvent(Who, () =>
    z.object({
      rationale: z.string().min(1).max(GOAL_LIMITS.reason),
      /** Absent in older logs: achieved. */
      outcome: ClosureOutcome.optional(),
      /** blocked: the todo accepted as blocked; rolled_back: the reverted revision. */
      cites: Name.optional(),
    }),
  ),
  todo_added: declareEvent(Who, () => z.object({ todo: TodoSpec, successor_of: TodoId.nullable() })),
  /** A routing signal, never a lock and never "running". */
  todo_claimed: declareEvent(Who, () => z.object({ todo_id: TodoId, agent_id: Name })),
  todo_claim_released: declareEvent(Who, () => z.object({ todo_id: TodoId, agent_id: Name })),
  todo_blocked: declareEvent(Who, () =>
    z.object({ todo_id: TodoId, reason: z.string().min(1).max(GOAL_LIMITS.reason) }),
  ),
  todo_deferred: declareEvent(Who, () =>
    z.object({ todo_id: TodoId, resume_when: ResumeCondition, note: Reason }),
  ),
  /** The explicit reopen of a blocked or deferred todo; clears its resume_when. */
  todo_reopened: declareEvent(["operator"], () => z.object({ todo_id: TodoId, note: Reason })),
  /** The predecessor is done with note `superseded`; its successor is added in the same append. */
  todo_superseded: declareEvent(Who, () =>
    z.object({
      todo_id: TodoId,
      successor_id: TodoId,
      note: z.literal("superseded"),
      reason: Reason,
    }),
  ),
  todo_closed_no_followup: declareEvent(Who, () =>
    z.object({ todo_id: TodoId, rationale: z.string().min(1).max(GOAL_LIMITS.reason) }),
  ),
  /** Done on external evidence: the validation receipt of a SUCCESS of the todo's task on the current revision. */
  todo_completed: declareEvent(["runtime"], () => z.object({ todo_id: TodoId, receipt: ValidationReceipt })),
  /**
   * A person's step, recorded on the person's word with evidence (never a run's verdict): `done` closes a
   * user_action or a task-less blocker; `blocker_accepted` accepts a blocked todo's blocker as its terminal
   * outcome (a verified blocker).
   */
  todo_attested: declareEvent(["operator"], () =>
    z.object({
      todo_id: TodoId,
      outcome: z.enum(["done", "blocker_accepted"]),
      note: z.string().min(1).max(GOAL_LIMITS.reason),
      by: Name.optional(),
      evidence: z.array(AttestedEvidence).min(1).max(8),
    }),
  ),
  acceptance_receipt_recorded: declareEvent(["runtime"], () =>
    z.object({ acceptance_id: Name, receipt: ValidationReceipt }),
  ),
  gate_decided: declareEvent(["operator"], () =>
    z.object({ todo_id: TodoId, decision: GateDecision, note: Reason }),
  ),
  vision_recorded: declareEvent(Who, () =>
    z.object({
      agent_id: Name,
      route: z.string().min(1).max(GOAL_LIMITS.route),
      checkpoint: VisionCheckpoint,
    }),
  ),
  vision_patched: declareEvent(Who, () =>
    z.object({
      agent_id: Name,
      patch: z.string().min(1).max(GOAL_LIMITS.patch),
      route: z.string().min(1).max(GOAL_LIMITS.route),
      reason: Reason,
      checkpoint: VisionCheckpoint,
    }),
  ),
  vision_unchanged_recorded: declareEvent(Who, () =>
    z.object({
      agent_id: Name,
      reason: z.string().min(1).max(GOAL_LIMITS.reason),
      checkpoint: VisionCheckpoint,
    }),
  ),
  /** One turn's spend, charged once per turn identity. */
  quota_spent: declareEvent(["runtime"], () =>
    z.object({
      turn_id: Name,
      at: Timestamp,
      turns: z.number().int().nonnegative(),
      tokens: z.number().int().nonnegative(),
      cost_usd: z.number().nonnegative(),
    }),
  ),
  ...monitorEvents,
  ...notifyEvents,
  ...replanEvents,
  ...turnEvents,
  ...turnLeaseEvents,
} as const satisfies EventArea;

export type GoalEventType = keyof typeof goalEvents;
export const goalEventTypes = Object.keys(goalEvents) as GoalEventType[];

/** A goal event as a decider emits it (the caller adds `id` and `meta`). */
export type GoalEventBody = {
  [K in GoalEventType]: { type: K; data: z.infer<(typeof goalEvents)[K]["schema"]> };
}[GoalEventType];
export type GoalEventData<K extends GoalEventType> = z.infer<(typeof goalEvents)[K]["schema"]>;

/** The origin a writer records for an event it appends on a person's command (or loopgate's own fact). */
export function goalEventOrigin(type: GoalEventType, byOperator: boolean): "operator" | "runtime" {
  const allowed: readonly string[] = goalEvents[type].origin;
  if (byOperator && allowed.includes("operator")) return "operator";
  return allowed.includes("runtime") ? "runtime" : "operator";
}

/** True when `type` belongs to the goal area. */
export function isGoalEventType(type: string): type is GoalEventType {
  return Object.hasOwn(goalEvents, type);
}

/** True when `event` belongs to the goal area (its stream is a goal's, never a run's). */
export function isGoalEvent<E extends { type: string }>(event: E): event is Extract<E, GoalEventBody> {
  return isGoalEventType(event.type);
}
