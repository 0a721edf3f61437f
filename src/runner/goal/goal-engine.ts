import {
  type GoalEventBody,
  goalEventOrigin,
  isGoalEventType,
  type TodoSpec,
} from "../../core/events/goal/goal-events.js";
import type { LoopgateEvent, RecordedEvent } from "../../core/events/loopgate-event.js";
import { decide as decideGoal, type GoalCommand, type GoalSpec } from "../../core/goal/goal-decider.js";
import { evolve as evolveGoal, foldGoal } from "../../core/goal/goal-state.js";
import type { GoalState } from "../../core/goal/goal-state-shape.js";
import { deriveGoal } from "./goal-derived.js";
import type { ResumeConditionData } from "./goal-spec.js";
import type { GoalFacts, GoalView } from "./goal-view.js";
import type { RunReceipt } from "./run-receipts.js";

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
  /** `unwritten`: the paths of the run's change the goal workspace lacks (todo-evidence.ts); any refuses it. */
  | { kind: "done"; todoId: string; receipt: RunReceipt; unwritten: readonly string[] }
  | { kind: "gate"; gateId: string; decision: "approved" | "rejected" | "cancelled"; note: string }
  | { kind: "gate_defer"; gateId: string; until: ResumeConditionData; note: string }
  | { kind: "activation"; activation: "active" | "stopped"; note: string }
  | { kind: "close_goal"; rationale: string }
  | { kind: "acceptance"; acceptanceId: string; receipt: RunReceipt }
  /** A goal command as is (a replan answer, a monitor poll): the decider checks it like any other. */
  | { kind: "command"; command: GoalCommand };

/** The goal events of a log, folded into the decider's state. */
export function goalState(events: readonly LoopgateEvent[]): GoalState {
  return foldGoal(events.filter((e) => isGoalEventType(e.type)) as unknown as GoalEventBody[]);
}

/** One event of a goal's stream folded into its state (events of other kinds leave it as it is). */
export function evolveGoalStream(state: GoalState, event: LoopgateEvent): GoalState {
  return isGoalEventType(event.type) ? evolveGoal(state, event as unknown as GoalEventBody) : state;
}

/** The decider's command for an intent. */
export function commandOf(intent: GoalIntent): GoalCommand {
  switch (intent.kind) {
    case "create":
      return { type: "create_goal", goal: { ...intent.goal, todos: intent.todos } };
    case "add":
      return { type: "add_todo", todo: intent.todo };
    case "block":
      return { type: "block_todo", todoId: intent.todoId, reason: intent.reason };
    case "defer":
      return { type: "defer_todo", todoId: intent.todoId, resumeWhen: intent.until, note: intent.note };
    case "reopen":
      return { type: "reopen_todo", todoId: intent.todoId, note: intent.note };
    case "supersede":
      return {
        type: "supersede_todo",
        todoId: intent.todoId,
        successor: intent.successor,
        reason: intent.note,
      };
    case "close_no_followup":
      return { type: "close_no_followup", todoId: intent.todoId, rationale: intent.rationale };
    case "done":
      return {
        type: "complete_todo",
        todoId: intent.todoId,
        receipt: intent.receipt,
        unwritten: intent.unwritten,
      };
    case "gate": {
      const decision = ({ approved: "approve", rejected: "reject", cancelled: "cancel" } as const)[
        intent.decision
      ];
      return { type: "decide_gate", todoId: intent.gateId, decision, note: intent.note };
    }
    case "gate_defer":
      return { type: "defer_gate", todoId: intent.gateId, resumeWhen: intent.until, note: intent.note };
    case "activation":
      return intent.activation === "stopped"
        ? { type: "stop_goal", note: intent.note }
        : { type: "resume_goal", note: intent.note };
    case "close_goal":
      return { type: "declare_no_followup", rationale: intent.rationale };
    case "acceptance":
      return { type: "record_acceptance", acceptanceId: intent.acceptanceId, receipt: intent.receipt };
    case "command":
      return intent.command;
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
  return goalViewOf(goalState(events), events, streamRevision, facts);
}

/** `goalView` of a log already folded (`state` is `goalState(events)`). */
export function goalViewOf(
  state: GoalState,
  events: readonly LoopgateEvent[],
  streamRevision: number,
  facts: GoalFacts,
): GoalView {
  const view = deriveGoal(state, streamRevision, facts, events);
  const created = events.find((e) => e.type === "goal_created");
  const source = created?.type === "goal_created" ? (created.data.source?.path ?? null) : null;
  return { ...view, sourcePath: source };
}

/** The origin recorded for an event appended on a person's command (operator) or loopgate's own (runtime). */
export function originOf(type: string, byOperator: boolean): "operator" | "runtime" {
  return isGoalEventType(type) ? goalEventOrigin(type, byOperator) : "runtime";
}
