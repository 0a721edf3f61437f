import type { AcceptanceItem } from "../events/goal/goal-events.js";
import { isActiveVision } from "./goal-state.js";
import type { GoalState, TodoState } from "./goal-state-shape.js";
import { handoffs } from "./handoff.js";
import { visionStanding } from "./vision.js";

/**
 * Acceptance proof and the obligations a goal owes before new work: replan when the advancement
 * frontier is exhausted and acceptance fails fresh, a successor for a handoff cleared without one, a
 * re-read of a vision whose checkpoint predates an acceptance change, a missing vision checkpoint once the
 * frontier is exhausted and acceptance audited on the current revision, and the closeout (add work or
 * record no_followup) when everything is done and proved.
 */

/** Where one acceptance item stands on the goal workspace's current revision. */
export interface AcceptanceStatus {
  id: string;
  ref: string;
  /** A SUCCESS of exactly this item (digest) on the current revision exists. */
  proved: boolean;
  /** The latest receipt of it on the current revision, if any. */
  latest: { runId: string; status: string; at: number } | null;
}

export function acceptanceStatus(state: GoalState, item: AcceptanceItem): AcceptanceStatus {
  const fresh = (state.acceptanceReceipts[item.id] ?? []).filter(
    (r) => r.receipt.goal_revision === state.revision && r.receipt.task_digest === item.digest,
  );
  const last = fresh[fresh.length - 1];
  return {
    id: item.id,
    ref: item.ref,
    proved: fresh.some((r) => r.receipt.status === "SUCCESS"),
    latest: last ? { runId: last.receipt.run_id, status: last.receipt.status, at: last.at } : null,
  };
}

/** Every acceptance item, proved or not, on the current revision. */
export function acceptanceReport(state: GoalState): AcceptanceStatus[] {
  return state.acceptance.map((a) => acceptanceStatus(state, a));
}

export type ObligationKind =
  | "replan_acceptance_failed"
  | "handoff_without_successor"
  | "vision_stale"
  | "vision_missing"
  | "monitor_replan"
  | "closeout";

export interface Obligation {
  kind: ObligationKind;
  /** The todo, acceptance item or agent it is about. */
  subject: string;
  detail: string;
}

const todosOf = (state: GoalState) => state.order.map((id) => state.todos[id] as TodoState);

/** No advancement todo is left unfinished: what the goal can do by running tasks is done. */
export function advancementExhausted(state: GoalState): boolean {
  return todosOf(state).every((t) => t.class !== "advancement_task" || t.status === "done");
}

/**
 * True when a real delta follows `at`: a todo added, an acceptance change, a vision_unchanged_reason, a
 * vision closed (with its successor), a no_followup intent or a compensation. A bare vision patch is no
 * answer (a real one comes with its todo or acceptance change), and neither is a replan_noop.
 */
export function answeredAfter(state: GoalState, at: number): boolean {
  if (todosOf(state).some((t) => t.addedAt > at)) return true;
  return state.lastAnswerAt > at;
}

/** The obligations the goal owes now, in a stable order. */
export function obligations(state: GoalState): Obligation[] {
  const out: Obligation[] = [];
  const report = acceptanceReport(state);
  if (advancementExhausted(state)) {
    for (const a of report) {
      if (a.proved || !a.latest || a.latest.status === "SUCCESS") continue;
      if (answeredAfter(state, a.latest.at)) continue;
      out.push({
        kind: "replan_acceptance_failed",
        subject: a.id,
        detail: `acceptance ${a.id} ended ${a.latest.status} (run ${a.latest.runId}) on the current revision with no advancement todo left: replan (a vision patch with a todo or acceptance change, or vision_unchanged_reason)`,
      });
    }
  }
  for (const h of handoffs(state))
    if (h.state === "cleared_without_successor")
      out.push({
        kind: "handoff_without_successor",
        subject: h.todoId,
        detail: `${h.todoId} was cleared without a successor: add a successor, reopen work, or record no_followup`,
      });
  const followed = Object.values(state.visions).filter(isActiveVision);
  for (const v of followed.sort((a, b) => a.agentId.localeCompare(b.agentId)))
    if (v.checkpoint.acceptance_version < state.acceptanceVersion)
      out.push({
        kind: "vision_stale",
        subject: v.agentId,
        detail: `agent ${v.agentId}'s vision was read against acceptance version ${v.checkpoint.acceptance_version}; acceptance is now version ${state.acceptanceVersion}: re-read it (patch or vision_unchanged_reason)`,
      });
  const standing = visionStanding(state);
  if (standing.kind === "stale" && !isActiveVision(standing.vision))
    out.push({
      kind: "vision_stale",
      subject: standing.agentId,
      detail: `agent ${standing.agentId}'s route was ${standing.vision.last} against acceptance version ${standing.vision.checkpoint.acceptance_version}; acceptance is now version ${state.acceptanceVersion}: record the route the goal follows now`,
    });
  // Frontier exhausted and acceptance audited on this revision: the route the goal closes on must be on record.
  if (standing.kind === "missing" && advancementExhausted(state) && report.every((a) => a.latest !== null))
    out.push({
      kind: "vision_missing",
      subject: standing.agentId,
      detail: `agent ${standing.agentId} has no vision checkpoint: record the route the goal follows (goal vision record, or a planner's patch_vision) before it can close`,
    });
  for (const [id, at] of Object.entries(state.monitorReplans))
    if (state.todos[id]?.status === "open" && !answeredAfter(state, at))
      out.push({
        kind: "monitor_replan",
        subject: id,
        detail: `monitor ${id} saw no change ${state.monitors[id]?.consecutiveNoChange ?? 0} times (its max_no_change_before_replan): replan (a vision patch with a todo or acceptance change, or vision_unchanged_reason), or complete the monitor`,
      });
  const allDone = todosOf(state).every((t) => t.status === "done");
  if (allDone && report.every((a) => a.proved) && state.noFollowup === null)
    out.push({
      kind: "closeout",
      subject: state.goalId,
      detail:
        "every todo is done and acceptance holds on the current revision: add work or record a no_followup intent",
    });
  return out;
}
