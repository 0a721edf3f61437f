import { interactionContract } from "../../core/goal/contract.js";
import { encodeContract } from "../../core/goal/contract-wire.js";
import type { GoalState, TodoState } from "../../core/goal/goal-state-shape.js";
import { projectStatus } from "../../core/goal/projection.js";
import type { GoalContext } from "../../core/goal/runtime-state.js";
import type { GoalFacts, GoalView, TodoView } from "./goal-view.js";

// core/goal's derived decisions (runtime state by precedence, interaction contract, frontier and closure,
// status projection) as the view the CLI prints. Pure: a function of the folded state and the outside facts.

/** The goal's view: facts, runtime state, contract, closure. */
export function deriveGoal(state: GoalState, streamRevision: number, facts: GoalFacts): GoalView {
  const ctx: GoalContext = { now: facts.now, health: facts.health };
  const status = projectStatus(state, ctx);
  const contract = interactionContract(state, ctx);
  const handoffOf = new Map(status.handoffs.map((h) => [h.todoId, h.state]));
  const todos: TodoView[] = status.todos.map((t) => {
    const s = state.todos[t.id] as TodoState;
    return {
      id: t.id,
      class: t.class,
      status: t.status,
      content: t.content,
      task: s.task,
      decisionScope: s.globalGate ? "* (goal-wide)" : s.decisionScope,
      dependsOn: t.dependsOn,
      requires: s.requiredDecisionScopes,
      claimedBy: t.claimedBy,
      resumeCandidate: t.resumeCandidate,
      resumeWhen: t.resumeWhen,
      supersededBy: t.supersededBy,
      successorOf: s.successorOf,
      noFollowup: t.noFollowup,
      gateDecision: t.decision,
      completion: t.completion ? { runId: t.completion.runId, revision: t.completion.goalRevision } : null,
      handoff: handoffOf.get(t.id) ?? null,
      note: t.note,
      blockReason: s.blockReason,
    };
  });
  const b = status.budget;
  const limits: Record<string, number> = {};
  const used: Record<string, number> = {};
  if (b.turnsPerWindow !== null) {
    limits.turns = b.turnsPerWindow;
    used.turns = b.turnsInWindow;
  }
  if (b.maxTokens !== null) {
    limits.tokens = b.maxTokens;
    used.tokens = b.tokens;
  }
  if (b.maxCostUsd !== null) {
    limits.cost_usd = b.maxCostUsd;
    used.cost_usd = b.costUsd;
  }
  const first = contract.nextCliActions[0];
  const nextAction = contract.terminal
    ? "nothing: the goal is closed, every frontier item is proved"
    : first
      ? `${first.argv.join(" ")}  (${first.why})`
      : `${contract.schedulerHint.action}: ${contract.reason}`;
  return {
    goalId: state.goalId,
    objective: state.objective,
    activation: state.activation,
    streamRevision,
    revision: state.revision,
    workspacePath: state.workspace?.path ?? "",
    agent: state.agent ?? { agent_id: "operator", kind: "builder" },
    sourcePath: null,
    todos,
    runtimeState: status.runtimeState,
    runtimeReason: status.reason,
    contract: encodeContract(contract),
    nextAction,
    frontierGaps: status.frontierGaps.map((g) => `${g.kind}${g.subject ? ` ${g.subject}` : ""}: ${g.detail}`),
    closed: status.terminal,
    budget: { limits, used },
    acceptance: status.acceptance.map((a) => ({
      id: a.id,
      ref: a.ref,
      digest: state.acceptance.find((x) => x.id === a.id)?.digest ?? "",
      proved: a.proved,
    })),
  };
}
