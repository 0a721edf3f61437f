import {
  type AcceptanceItem,
  GOAL_LIMITS,
  type GoalEventBody,
  type TodoSpec,
} from "../events/goal/goal-events.js";
import { boundText } from "../kernel/bounded.js";
import { acceptanceListRefusal } from "./acceptance-change.js";
import { checkSpec, fail, need } from "./command-checks.js";
import { evolve, isActiveVision } from "./goal-state.js";
import type { GoalState } from "./goal-state-shape.js";
import type { Obligation } from "./obligations.js";
import { decideVision } from "./vision.js";

/**
 * What answers a replan obligation (Vision / replan), pure. A planner turn or an operator
 * must answer with a real delta:
 * - a Vision patch together with a todo or acceptance change (a bare patch is refused: patch_without_delta),
 *   except the agent's first route (none followed yet: recording it is the delta a missing checkpoint asks);
 * - a vision_unchanged_reason where the route holds (new todos may come with it);
 * - vision_closed: the stage is accepted and closed, which requires a successor todo;
 * - a no_followup intent (no new work with it).
 * An answer with none of these is `replan_noop`: recorded, and the obligation is NOT cleared.
 * A rollback of an accepted change is a compensation: the revert commit as the new revision, its
 * receipt (`change_compensated`) and a successor, in one append. History is never rewritten.
 */
export type VisionStatement =
  | { kind: "patch"; patch: string; route: string; reason: string }
  | { kind: "unchanged"; reason: string }
  | { kind: "close"; reason: string };

export interface ReplanAnswer {
  agent_id: string;
  /** The obligation answered, as `obligationId` names it (kind:subject). */
  obligation: string;
  vision?: VisionStatement;
  todos?: { todo: TodoSpec; successor_of?: string }[];
  /** The whole new acceptance list; `delta` names what was added or retired (recorded with it). */
  acceptance?: {
    acceptance: AcceptanceItem[];
    reason: string;
    delta?: { change: "added" | "retired"; item_id: string }[];
  };
  no_followup?: { rationale: string };
  /** Said with a no-delta answer; recorded with replan_noop. */
  reason?: string;
  /** The turn's operation id (its writeback effect_ref): the answer ends with its `replan_answered`
   * receipt, and the same id again decides nothing (a retry replays). */
  operation_id?: string;
}

export type ReplanCommand =
  | { type: "answer_replan"; answer: ReplanAnswer }
  | {
      type: "compensate_change";
      /** The accepted change (a recorded revision) being rolled back. */
      revertedRevision: string;
      /** The revert commit the caller made on top of the current revision. */
      revertRevision: string;
      reason: string;
      successor: TodoSpec;
      turnId?: string;
    };

/** A stable id of an obligation: what a replan turn is bound to. */
export const obligationId = (o: Pick<Obligation, "kind" | "subject">) => `${o.kind}:${o.subject}`;

/** The kind of answer: a delta, or no delta at all (replan_noop). */
export function answerKind(a: ReplanAnswer): "delta" | "replan_noop" {
  const v = a.vision?.kind;
  const work = (a.todos?.length ?? 0) > 0 || a.acceptance !== undefined;
  return work || v === "unchanged" || v === "close" || a.no_followup !== undefined || v === "patch"
    ? "delta"
    : "replan_noop";
}

const bound = (s: string | undefined, max: number = GOAL_LIMITS.reason) => boundText(s ?? "", max);

/** The events of a replan answer, or a DomainError naming the rule it breaks. */
export function decideReplan(cmd: ReplanCommand, state: GoalState): GoalEventBody[] {
  if (cmd.type === "compensate_change") return compensate(cmd, state);
  const a = cmd.answer;
  const c = "answer_replan";
  if (!a.agent_id.trim()) fail(`${c}: the answer names no agent`);
  if (a.operation_id !== undefined && state.replanOperations[a.operation_id]) return []; // a retry: replayed
  const events = decideAnswer(a, state);
  if (a.operation_id === undefined) return events;
  const receipt: GoalEventBody = {
    type: "replan_answered",
    data: {
      agent_id: a.agent_id,
      obligation: a.obligation.slice(0, 400),
      operation_id: a.operation_id,
      outcome: answerKind(a),
    },
  };
  return [...events, receipt];
}

/** The receipt of a replan answer given under `operationId`, or null: the readback of a planner turn. */
export function replanOperation(state: GoalState, operationId: string) {
  return state.replanOperations[operationId] ?? null;
}

function decideAnswer(a: ReplanAnswer, state: GoalState): GoalEventBody[] {
  const c = "answer_replan";
  const todos = a.todos ?? [];
  const work = todos.length > 0 || a.acceptance !== undefined;
  if (answerKind(a) === "replan_noop")
    return [
      {
        type: "replan_noop_recorded",
        data: { agent_id: a.agent_id, obligation: a.obligation.slice(0, 400), reason: bound(a.reason) },
      },
    ];
  const firstRoute = !isActiveVision(state.visions[a.agent_id]);
  if (a.vision?.kind === "patch" && !work && !firstRoute)
    fail(
      `${c}: rule patch_without_delta: a vision patch must come with a todo or acceptance change (or say vision_unchanged_reason when the route holds)`,
    );
  if (a.vision?.kind === "close" && todos.length === 0)
    fail(`${c}: rule vision_closed_needs_successor: closing the vision's stage needs a successor todo`);
  if (work && a.vision === undefined && a.no_followup === undefined)
    fail(
      `${c}: rule vision_statement_missing: say whether the route changed: patch the vision with this delta, or give a vision_unchanged_reason`,
    );
  if (a.no_followup && todos.length > 0)
    fail(`${c}: rule no_followup_with_new_work: a no_followup intent cannot come with new todos`);
  if (a.no_followup && !a.no_followup.rationale.trim())
    fail(`${c}: rule no_followup_needs_rationale: a no_followup intent needs a rationale`);
  const out: GoalEventBody[] = [];
  let s = state;
  const push = (e: GoalEventBody) => {
    out.push(e);
    s = evolve(s, e);
  };
  if (a.acceptance) {
    const refusal = acceptanceListRefusal(a.acceptance.acceptance, c);
    if (refusal) fail(refusal);
    const delta = a.acceptance.delta?.length ? { delta: a.acceptance.delta } : {};
    push({
      type: "goal_acceptance_changed",
      data: { acceptance: a.acceptance.acceptance, reason: bound(a.acceptance.reason), ...delta },
    });
  }
  const v = a.vision;
  if (v?.kind === "patch") {
    const first = !isActiveVision(s.visions[a.agent_id]);
    const cmdV = first
      ? ({ type: "record_vision", agentId: a.agent_id, route: v.route } as const)
      : ({
          type: "patch_vision",
          agentId: a.agent_id,
          patch: v.patch,
          route: v.route,
          reason: v.reason,
        } as const);
    for (const e of decideVision(cmdV, s)) push(e);
  }
  if (v?.kind === "unchanged")
    for (const e of decideVision(
      { type: "record_vision_unchanged", agentId: a.agent_id, reason: v.reason },
      s,
    ))
      push(e);
  const specs = todos.map((t) => t.todo);
  for (const t of todos) {
    checkSpec(s, t.todo, c, specs);
    if (t.successor_of !== undefined) need(s, t.successor_of, c);
    push({ type: "todo_added", data: { todo: t.todo, successor_of: t.successor_of ?? null } });
  }
  if (v?.kind === "close") {
    if (!s.visions[a.agent_id]) fail(`${c}: agent ${a.agent_id} has no vision to close`);
    const last = todos[todos.length - 1]?.todo.id as string;
    push({
      type: "vision_closed",
      data: {
        agent_id: a.agent_id,
        reason: bound(v.reason),
        successor_id: last,
        checkpoint: { goal_revision: s.revision, acceptance_version: s.acceptanceVersion },
      },
    });
  }
  if (a.no_followup)
    push({ type: "goal_no_followup_declared", data: { rationale: bound(a.no_followup.rationale) } });
  const broke = s.anomalies.slice(state.anomalies.length);
  if (broke.length) fail(`${c}: the answer does not fold cleanly: ${broke.join("; ")}`);
  return out;
}

function compensate(cmd: Extract<ReplanCommand, { type: "compensate_change" }>, state: GoalState) {
  const c = "compensate_change";
  if (!state.revisionHistory.slice(1).includes(cmd.revertedRevision))
    fail(
      `${c}: rule compensates_accepted_change: ${cmd.revertedRevision} is not an accepted change of the goal workspace (its recorded revisions after the first)`,
    );
  if (state.compensations.some((x) => x.revertedRevision === cmd.revertedRevision))
    fail(`${c}: rule compensate_once: ${cmd.revertedRevision} is already compensated`);
  if (cmd.revertRevision === state.revision || state.revisionHistory.includes(cmd.revertRevision))
    fail(`${c}: rule history_is_append_only: the revert must be a new commit, not ${cmd.revertRevision}`);
  if (!cmd.reason.trim()) fail(`${c}: a compensation needs a reason`);
  checkSpec(state, cmd.successor, c);
  return [
    {
      type: "goal_revision_recorded",
      data: {
        revision: cmd.revertRevision,
        previous: state.revision,
        reason: bound(`revert ${cmd.revertedRevision}: ${cmd.reason}`),
        ...(cmd.turnId ? { turn_id: cmd.turnId } : {}),
      },
    },
    { type: "todo_added", data: { todo: cmd.successor, successor_of: null } },
    {
      type: "change_compensated",
      data: {
        reverted_revision: cmd.revertedRevision,
        revert_revision: cmd.revertRevision,
        reason: bound(cmd.reason),
        successor_id: cmd.successor.id,
        ...(cmd.turnId ? { turn_id: cmd.turnId } : {}),
      },
    },
  ] satisfies GoalEventBody[];
}
