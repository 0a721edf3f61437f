import { streamOf } from "../../core/events/loopgate-event.js";
import { interactionContract } from "../../core/goal/contract.js";
import { encodeContract } from "../../core/goal/contract-wire.js";
import type { GoalState, TodoState } from "../../core/goal/goal-state-shape.js";
import { goalHistory } from "../../core/goal/history.js";
import type { HistoryEvent } from "../../core/goal/history-words.js";
import { projectStatus } from "../../core/goal/projection.js";
import type { GoalContext } from "../../core/goal/runtime-state.js";
import { spendByKind } from "../../core/goal/spend-kinds.js";
import { turnInFlight } from "../../core/goal/turn-in-flight.js";
import { visionStanding } from "../../core/goal/vision.js";
import { ownerProcessGone } from "../stream/lease-owner.js";
import type { GoalFacts, GoalView, TodoView } from "./goal-view.js";

// core/goal's derived decisions (runtime state by precedence, interaction contract, frontier and closure,
// status projection, the turn in flight) as the view the CLI prints. A function of the folded state, its
// events and the outside facts, and of one look: whether the turn lease's owner process is gone here.

/** The goal's view: facts, runtime state, contract, closure, the turn in flight (given the stored events). */
export function deriveGoal(
  state: GoalState,
  streamRevision: number,
  facts: GoalFacts,
  events: readonly { type: string }[] = [],
): GoalView {
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
      attestation: s.attestation,
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
    closureOutcome: state.noFollowup?.outcome ?? null,
    vision: visionOf(state),
    budget: { limits, used },
    acceptance: status.acceptance.map((a) => ({
      id: a.id,
      ref: a.ref,
      digest: state.acceptance.find((x) => x.id === a.id)?.digest ?? "",
      proved: a.proved,
    })),
    inFlight: inFlightOf(state, events, facts.now),
    spend: spendByKind(state),
  };
}

/** The vision checkpoint closure reads (core/goal/vision.ts), as the view shows it. */
function visionOf(state: GoalState): GoalView["vision"] {
  const v = visionStanding(state);
  return { agentId: v.agentId, standing: v.kind, last: v.kind === "missing" ? null : v.vision.last };
}

/** The turn in flight: the lease from the folded state, its open turn and when it was taken from the events. */
function inFlightOf(state: GoalState, events: readonly { type: string }[], now: Date) {
  const lease = state.lease;
  if (!lease && !state.turnOrder.length) return null;
  const h = goalHistory(streamOf("goal", events as HistoryEvent[]));
  return turnInFlight(h, lease, now, lease ? ownerProcessGone(lease.owner) : null);
}
