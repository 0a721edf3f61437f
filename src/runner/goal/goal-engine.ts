import type { RecordedEvent } from "../../core/events.js";
import {
  decide as decideGoal,
  foldGoal,
  type GoalCommand,
  type GoalEventBody,
  type GoalSpec,
  type GoalState,
  goalEventOrigin,
  type HealthIssue,
  isGoalEventType,
  type TodoSpec,
} from "../../core/goal/index.js";
import type { RunReceipt } from "./evidence.js";
import { deriveGoal } from "./goal-derived.js";
import type { ResumeConditionData, TaskRefData } from "./goal-spec.js";

// The one place the CLI meets core/goal: intents become the decider's commands, and the decider's state
// and derived decisions become the view the CLI prints. Everything here is pure.

/** A todo as declared (goal file or `todo add`). */
export type TodoSpecData = TodoSpec;

/** What a person (or loopgate) asks of a goal. */
export type GoalIntent =
  | { kind: "create"; goal: Omit<GoalSpec, "todos">; todos: TodoSpecData[] }
  | { kind: "add"; todo: TodoSpecData }
  | { kind: "block"; todoId: string; reason: string }
  | { kind: "defer"; todoId: string; until: ResumeConditionData; note: string }
  | { kind: "reopen"; todoId: string; note: string }
  | { kind: "supersede"; todoId: string; successor: TodoSpecData; note: string }
  | { kind: "close_no_followup"; todoId: string; rationale: string }
  | { kind: "done"; todoId: string; receipt: RunReceipt }
  | { kind: "gate"; gateId: string; decision: "approved" | "rejected" | "cancelled"; note: string }
  | { kind: "gate_defer"; gateId: string; until: ResumeConditionData; note: string }
  | { kind: "activation"; activation: "active" | "stopped"; note: string }
  | { kind: "close_goal"; rationale: string }
  | { kind: "acceptance"; acceptanceId: string; receipt: RunReceipt };

/** Facts from outside the stream that the derived decisions need (health, the clock). */
export interface GoalFacts {
  now: Date;
  /** Health problems: a task file missing or invalid, the workspace dirty or missing. */
  health: HealthIssue[];
  /** The workspace's HEAD, when readable. */
  workspaceRevision: string | null;
}

/** One todo as the CLI shows it. */
export interface TodoView {
  id: string;
  class: TodoSpecData["class"];
  status: "open" | "done" | "blocked" | "deferred";
  content: string;
  task: TaskRefData | null;
  decisionScope: string | null;
  dependsOn: string[];
  requires: string[];
  claimedBy: string | null;
  /** Derived: the todo's deferral condition holds (it stays deferred until reopened). */
  resumeCandidate: boolean;
  resumeWhen: ResumeConditionData | null;
  supersededBy: string | null;
  successorOf: string | null;
  noFollowup: string | null;
  gateDecision: string | null;
  completion: { runId: string; revision: string } | null;
  /** Derived handoff state of its relation, when it has one. */
  handoff: string | null;
  note: string | null;
  blockReason: string | null;
}

/** A goal as the CLI shows it: facts and derived decisions, recomputed on every read. */
export interface GoalView {
  goalId: string;
  objective: string;
  activation: "active" | "stopped";
  streamRevision: number;
  /** The revision the goal stream holds as current (todo evidence must be on it). */
  revision: string;
  workspacePath: string;
  agent: { agent_id: string; kind: string; model?: string; command?: string };
  /** The goal file it was created from (a builder command's relative paths mean its folder). */
  sourcePath: string | null;
  todos: TodoView[];
  runtimeState: string;
  runtimeReason: string;
  /** The interaction contract (printed as is with --json). */
  contract: Record<string, unknown>;
  /** The single next action, as a sentence a person can follow. */
  nextAction: string;
  /** What keeps the goal from terminal closure; empty only when it is closed. */
  frontierGaps: string[];
  closed: boolean;
  budget: { limits: Record<string, unknown>; used: Record<string, unknown> };
  acceptance: { id: string; ref: string; proved: boolean }[];
}

/** The goal events of a log, folded into the decider's state. */
export function goalState(events: readonly RecordedEvent[]): GoalState {
  return foldGoal(events.filter((e) => isGoalEventType(e.type)) as unknown as GoalEventBody[]);
}

/** The decider's command for an intent. */
export function commandOf(intent: GoalIntent): GoalCommand {
  switch (intent.kind) {
    case "create":
      return { type: "create_goal", goal: { ...intent.goal, todos: intent.todos } };
    case "add":
      return { type: "add_todo", todo: intent.todo };
    case "block":
      return { type: "block_todo", todo_id: intent.todoId, reason: intent.reason };
    case "defer":
      return { type: "defer_todo", todo_id: intent.todoId, resume_when: intent.until, note: intent.note };
    case "reopen":
      return { type: "reopen_todo", todo_id: intent.todoId, note: intent.note };
    case "supersede":
      return {
        type: "supersede_todo",
        todo_id: intent.todoId,
        successor: intent.successor,
        reason: intent.note,
      };
    case "close_no_followup":
      return { type: "close_no_followup", todo_id: intent.todoId, rationale: intent.rationale };
    case "done":
      return { type: "complete_todo", todo_id: intent.todoId, receipt: intent.receipt };
    case "gate": {
      const decision = ({ approved: "approve", rejected: "reject", cancelled: "cancel" } as const)[
        intent.decision
      ];
      return { type: "decide_gate", todo_id: intent.gateId, decision, note: intent.note };
    }
    case "gate_defer":
      return { type: "defer_gate", todo_id: intent.gateId, resume_when: intent.until, note: intent.note };
    case "activation":
      return intent.activation === "stopped"
        ? { type: "stop_goal", note: intent.note }
        : { type: "resume_goal", note: intent.note };
    case "close_goal":
      return { type: "declare_no_followup", rationale: intent.rationale };
    case "acceptance":
      return { type: "record_acceptance", acceptance_id: intent.acceptanceId, receipt: intent.receipt };
  }
}

/** The decided events of an intent on the goal's log; throws the decider's DomainError when refused. */
export function decideIntent(
  intent: GoalIntent,
  events: readonly RecordedEvent[],
  _facts: GoalFacts,
): GoalEventBody[] {
  return decideGoal(commandOf(intent), goalState(events));
}

/** The goal's view, rebuilt from its log and the outside facts. */
export function goalView(
  events: readonly RecordedEvent[],
  streamRevision: number,
  facts: GoalFacts,
): GoalView {
  const view = deriveGoal(goalState(events), streamRevision, facts);
  const created = events.find((e) => e.type === "goal_created");
  const source = created?.type === "goal_created" ? (created.data.source?.path ?? null) : null;
  return { ...view, sourcePath: source };
}

/** The origin recorded for an event appended on a person's command (operator) or loopgate's own (runtime). */
export function originOf(type: string, byOperator: boolean): "operator" | "runtime" {
  return isGoalEventType(type) ? goalEventOrigin(type, byOperator) : "runtime";
}
