import type { RecordedEvent } from "../../core/events.js";
import type { RunReceipt } from "./evidence.js";
import type { ResumeConditionData, TaskRefData } from "./goal-spec.js";

// The one place the CLI meets core/goal: intents become the decider's commands, and the decider's state
// and projections become the view the CLI prints. Everything here is pure.

/** A todo as declared (goal file or `todo add`). */
export interface TodoSpecData {
  id: string;
  content: string;
  class: "advancement_task" | "continuous_monitor" | "user_gate" | "user_action" | "blocker";
  task?: TaskRefData;
  decision_scope?: string;
  required_decision_scopes?: string[];
  depends_on?: string[];
  monitor?: {
    argv: string[];
    cadence_seconds: number;
    timeout_seconds: number;
    expires_at?: string;
    max_no_change_before_replan?: number;
  };
}

/** What a person (or loopgate) asks of a goal. */
export type GoalIntent =
  | { kind: "create"; goal: Record<string, unknown>; todos: TodoSpecData[] }
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
  | { kind: "acceptance"; acceptanceId: string; receipt: RunReceipt };

/** Facts from outside the stream that the derived decisions need (health, the clock). */
export interface GoalFacts {
  now: Date;
  /** Health problems: a task file missing or invalid, the workspace dirty or missing. */
  health: string[];
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
  /** The interaction contract as core/goal derives it (printed as is with --json). */
  contract: Record<string, unknown>;
  /** The single next action, as a sentence a person can follow. */
  nextAction: string;
  /** What keeps the goal from terminal closure; empty only when it is closed. */
  frontierGaps: string[];
  closed: boolean;
  budget: { limits: Record<string, unknown>; used: Record<string, unknown> };
  acceptance: { id: string; ref: string; proved: boolean }[];
}

/** The decided events of an intent on the goal's log; throws the decider's DomainError when refused. */
export function decideIntent(
  _intent: GoalIntent,
  _events: readonly RecordedEvent[],
  _facts: GoalFacts,
): { type: string; data: unknown }[] {
  throw new Error("core/goal is not merged yet");
}

/** The goal's view, rebuilt from its log and the outside facts. */
export function goalView(_events: readonly RecordedEvent[], _revision: number, _facts: GoalFacts): GoalView {
  throw new Error("core/goal is not merged yet");
}

/** The origin recorded for an event appended on a person's command (operator) or loopgate's own (runtime). */
export function originOf(_type: string, _byOperator: boolean): "operator" | "runtime" {
  return "operator";
}
