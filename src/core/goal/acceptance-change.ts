import type { AcceptanceItem, ClosureOutcome, GoalEventBody } from "../events/goal/goal-events.js";
import { GOAL_LIMITS } from "../events/goal/goal-events.js";
import { boundText } from "../kernel/bounded.js";
import { fail } from "./command-checks.js";
import type { GoalState } from "./goal-state-shape.js";
import { acceptanceReport } from "./obligations.js";

/**
 * Acceptance that can change after the goal is created: an item added or retired, by a person (goal
 * acceptance add|retire) or with a replan answer. Each change is one `goal_acceptance_changed` with the
 * whole new list and its delta; it bumps the acceptance version, so every vision checkpoint read against
 * the old one is stale (derived) and a replan obligation asks to re-read it. Also here: the closure
 * intent's rule (an honest negative needs its evidence on record).
 */
export type AcceptanceCommand =
  | { type: "add_acceptance"; item: AcceptanceItem; reason: string }
  | { type: "retire_acceptance"; acceptanceId: string; reason: string };

export function decideAcceptanceChange(cmd: AcceptanceCommand, state: GoalState): GoalEventBody[] {
  const c = cmd.type;
  if (!cmd.reason.trim()) fail(`${c}: an acceptance change needs a reason (--reason TEXT)`);
  const reason = boundText(cmd.reason, GOAL_LIMITS.reason);
  if (cmd.type === "add_acceptance") {
    if (state.acceptance.some((a) => a.id === cmd.item.id))
      fail(`${c}: acceptance ${cmd.item.id} is already an item of goal ${state.goalId}`);
    if (state.acceptance.length >= GOAL_LIMITS.list)
      fail(`${c}: a goal holds at most ${GOAL_LIMITS.list} acceptance items`);
    return [
      {
        type: "goal_acceptance_changed",
        data: {
          acceptance: [...state.acceptance, cmd.item],
          reason,
          delta: [{ change: "added", item_id: cmd.item.id }],
        },
      },
    ];
  }
  if (!state.acceptance.some((a) => a.id === cmd.acceptanceId))
    fail(
      `${c}: ${cmd.acceptanceId} is not an acceptance item of goal ${state.goalId}; its items: ${state.acceptance.map((a) => a.id).join(", ")}`,
    );
  const rest = state.acceptance.filter((a) => a.id !== cmd.acceptanceId);
  if (rest.length === 0)
    fail(
      `${c}: rule acceptance_not_empty: ${cmd.acceptanceId} is the goal's last acceptance item; add its replacement first (an empty list proves nothing)`,
    );
  return [
    {
      type: "goal_acceptance_changed",
      data: { acceptance: rest, reason, delta: [{ change: "retired", item_id: cmd.acceptanceId }] },
    },
  ];
}

/** Why a list of acceptance items cannot be the goal's acceptance (empty, or an id twice), or null. */
export function acceptanceListRefusal(items: readonly AcceptanceItem[], c: string): string | null {
  if (items.length === 0) return `${c}: acceptance must list at least one task or gate`;
  const seen = new Set<string>();
  for (const a of items) {
    if (seen.has(a.id)) return `${c}: acceptance id ${a.id} appears twice`;
    seen.add(a.id);
  }
  return null;
}

/**
 * Why the goal would refuse a closure intent with this outcome now, or null. An honest negative needs its
 * evidence: blocked cites a todo whose blocker was accepted with evidence; rolled_back cites a revision a
 * recorded compensation reverted; not_achieved needs every acceptance item run on the current revision
 * (coverage) and not all of them proved. Achieved is checked at closure (acceptance proved fresh).
 */
export function closureIntentRefusal(
  state: GoalState,
  outcome: ClosureOutcome,
  cites: string | undefined,
): string | null {
  const c = "declare_no_followup";
  if (outcome === "achieved" || outcome === "not_achieved") {
    if (cites !== undefined)
      return `${c}: an ${outcome} closure cites nothing (--blocker/--revision belong to blocked/rolled_back)`;
    if (outcome === "achieved") return null;
    const report = acceptanceReport(state);
    const unrun = report.filter((a) => a.latest === null).map((a) => a.id);
    if (unrun.length)
      return `${c}: rule negative_needs_coverage: a not_achieved closure needs every acceptance item run on the current revision; not run: ${unrun.join(", ")} (loopgate goal accept)`;
    if (report.every((a) => a.proved))
      return `${c}: every acceptance item is proved on the current revision: the goal is achieved, not not_achieved`;
    return null;
  }
  if (!cites)
    return `${c}: a ${outcome} closure must cite its evidence (${outcome === "blocked" ? "--blocker TODO" : "--revision REV"})`;
  if (outcome === "blocked") {
    const t = state.todos[cites];
    if (t?.attestation?.outcome !== "blocker_accepted")
      return `${c}: rule negative_needs_evidence: ${cites} is no verified blocker (a blocked todo whose blocker was accepted with evidence: todo accept-blocker)`;
    return null;
  }
  if (!state.compensations.some((x) => x.revertedRevision === cites))
    return `${c}: rule negative_needs_evidence: no compensation reverted ${cites} (loopgate goal revert)`;
  return null;
}
