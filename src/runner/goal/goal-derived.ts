import { interactionContract } from "../../core/goal/contract.js";
import type { GoalState, TodoState } from "../../core/goal/goal-state-shape.js";
import { projectStatus } from "../../core/goal/projection.js";
import type { GoalContext } from "../../core/goal/runtime-state.js";
import type { GoalFacts, GoalView, TodoView } from "./goal-view.js";

// core/goal's derived decisions (runtime state by precedence, interaction contract, frontier and closure,
// status projection) as the view the CLI prints. Pure: a function of the folded state and the outside facts.

/** The goal's view: facts, runtime state, contract, closure. */
export function deriveGoal(state: GoalState, streamRevision: number, facts: GoalFacts): GoalView {
  const ctx: GoalContext = { now: facts.now.toISOString(), health: facts.health };
  const status = projectStatus(state, ctx);
  const contract = interactionContract(state, ctx);
  const handoffOf = new Map(status.handoffs.map((h) => [h.todo_id, h.state]));
  const todos: TodoView[] = status.todos.map((t) => {
    const s = state.todos[t.id] as TodoState;
    return {
      id: t.id,
      class: t.class,
      status: t.status,
      content: t.content,
      task: s.task,
      decisionScope: s.global_gate ? "* (goal-wide)" : s.decision_scope,
      dependsOn: t.depends_on,
      requires: s.required_decision_scopes,
      claimedBy: t.claimed_by,
      resumeCandidate: t.resume_candidate,
      resumeWhen: t.resume_when,
      supersededBy: t.superseded_by,
      successorOf: s.successor_of,
      noFollowup: t.no_followup,
      gateDecision: t.decision,
      completion: t.completion ? { runId: t.completion.run_id, revision: t.completion.goal_revision } : null,
      handoff: handoffOf.get(t.id) ?? null,
      note: t.note,
      blockReason: s.block_reason,
    };
  });
  const b = status.budget;
  const limits: Record<string, number> = {};
  const used: Record<string, number> = {};
  if (b.turns_per_window !== null) {
    limits.turns = b.turns_per_window;
    used.turns = b.turns_in_window;
  }
  if (b.max_tokens !== null) {
    limits.tokens = b.max_tokens;
    used.tokens = b.tokens;
  }
  if (b.max_cost_usd !== null) {
    limits.cost_usd = b.max_cost_usd;
    used.cost_usd = b.cost_usd;
  }
  const next_cli_actions = contract.next_cli_actions;
  const first = next_cli_actions[0];
  const nextAction = contract.terminal
    ? "nothing: the goal is closed, every frontier item is proved"
    : first
      ? `${first.argv.join(" ")}  (${first.why})`
      : `${contract.scheduler_hint.action}: ${contract.reason}`;
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
    runtimeState: status.runtime_state,
    runtimeReason: status.reason,
    contract: contract as unknown as Record<string, unknown>,
    nextAction,
    frontierGaps: status.frontier_gaps.map(
      (g) => `${g.kind}${g.subject ? ` ${g.subject}` : ""}: ${g.detail}`,
    ),
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
