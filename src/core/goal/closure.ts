import type { ClosureOutcome } from "../events/goal/goal-events.js";
import type { GoalState, TodoState } from "./goal-state-shape.js";
import { handoffs } from "./handoff.js";
import { type AcceptanceStatus, acceptanceReport } from "./obligations.js";
import { type Assessment, assess, type GoalContext } from "./runtime-state.js";
import { visionStanding } from "./vision.js";

/**
 * The frontier and terminal closure: a strict conjunction, never "the queue looks empty". Terminal holds
 * only when every item below is absent: no unfinished todo of any class, no unfinished successor, no
 * blocking or unrouted handoff, no replan obligation, a vision checkpoint read against the current
 * acceptance, every acceptance item proved by a SUCCESS on the current revision, no health issue
 * (autonomy blocker), a recorded no_followup intent, and a goal that is active and not throttled.
 * An honest negative intent (a verified blocker, a rollback, a coverage-backed not_achieved) stands in for
 * the acceptance proof, each only with its evidence on record; it closes the goal, never as achieved.
 */
export const GAP_KINDS = [
  "advancement",
  "monitor",
  "user_gate",
  "user_action",
  "autonomy_blocker",
  "successor",
  "handoff",
  "replan",
  "vision",
  "acceptance",
  "health",
  "no_followup",
  "stopped",
  "throttled",
] as const;
export type GapKind = (typeof GAP_KINDS)[number];

export interface FrontierGap {
  kind: GapKind;
  /** The todo, acceptance item or agent it is about (null: the goal). */
  subject: string | null;
  detail: string;
}

const CLASS_GAP: Record<TodoState["class"], GapKind> = {
  advancement_task: "advancement",
  continuous_monitor: "monitor",
  user_gate: "user_gate",
  user_action: "user_action",
  blocker: "autonomy_blocker",
};

/** Every open frontier item, in a stable order. */
export function frontierGaps(
  state: GoalState,
  ctx: GoalContext,
  assessed: Assessment = assess(state, ctx),
): FrontierGap[] {
  const gaps: FrontierGap[] = [];
  const todos = state.order.map((id) => state.todos[id] as TodoState);
  for (const t of todos)
    if (t.status !== "done")
      gaps.push({ kind: CLASS_GAP[t.class], subject: t.id, detail: `${t.id} is ${t.status}` });
  for (const t of todos)
    for (const s of t.successors)
      if (state.todos[s]?.status !== "done")
        gaps.push({ kind: "successor", subject: s, detail: `${s}, the successor of ${t.id}, is not done` });
  for (const h of handoffs(state))
    if (h.state === "blocking" || h.state === "deferred" || h.state === "cleared_without_successor")
      gaps.push({ kind: "handoff", subject: h.todoId, detail: `handoff of ${h.todoId} is ${h.state}` });
  const standing = visionStanding(state);
  for (const o of assessed.obligations) {
    // The goal's own vision checkpoint is its own gap (below), whether or not an obligation asks for it yet.
    const own = (o.kind === "vision_missing" || o.kind === "vision_stale") && o.subject === standing.agentId;
    if (o.kind !== "closeout" && !own) gaps.push({ kind: "replan", subject: o.subject, detail: o.detail });
  }
  if (standing.kind !== "fresh")
    gaps.push({
      kind: "vision",
      subject: standing.agentId,
      detail:
        standing.kind === "missing"
          ? `agent ${standing.agentId} has no vision checkpoint (goal vision record)`
          : `agent ${standing.agentId}'s vision was read against acceptance version ${standing.vision.checkpoint.acceptance_version}, not the current ${state.acceptanceVersion} (stale: re-read it)`,
    });
  gaps.push(...acceptanceGaps(state, acceptanceReport(state)));
  for (const h of assessed.health)
    gaps.push({ kind: "health", subject: h.todo_id ?? null, detail: `${h.code}: ${h.detail}` });
  if (state.noFollowup === null)
    gaps.push({ kind: "no_followup", subject: null, detail: "no structured no_followup intent is recorded" });
  if (state.activation === "stopped")
    gaps.push({ kind: "stopped", subject: null, detail: "the goal is stopped" });
  if (assessed.budget.exhausted.length)
    gaps.push({
      kind: "throttled",
      subject: null,
      detail: `budget spent: ${assessed.budget.exhausted.join(", ")}`,
    });
  return gaps;
}

/**
 * The acceptance conjunct, by the closure intent's outcome: achieved (or none yet) needs every item proved;
 * blocked and rolled_back need their cited evidence on record; not_achieved needs every item run on the
 * current revision (its coverage) and at least one not proved.
 */
function acceptanceGaps(state: GoalState, report: AcceptanceStatus[]): FrontierGap[] {
  const intent = state.noFollowup;
  const gap = (subject: string | null, detail: string): FrontierGap => ({
    kind: "acceptance",
    subject,
    detail,
  });
  switch (intent?.outcome ?? "achieved") {
    case "achieved":
      return report
        .filter((a) => !a.proved)
        .map((a) =>
          gap(
            a.id,
            a.latest
              ? `acceptance ${a.id} ended ${a.latest.status} on revision ${state.revision}`
              : `acceptance ${a.id} has no SUCCESS on the current revision ${state.revision}`,
          ),
        );
    case "blocked": {
      const t = intent?.cites ? state.todos[intent.cites] : undefined;
      return t?.attestation?.outcome === "blocker_accepted"
        ? []
        : [
            gap(
              intent?.cites ?? null,
              `the blocked closure cites ${intent?.cites}, which is no accepted blocker`,
            ),
          ];
    }
    case "rolled_back":
      return state.compensations.some((c) => c.revertedRevision === intent?.cites)
        ? []
        : [
            gap(
              intent?.cites ?? null,
              `the rolled_back closure cites ${intent?.cites}, which no compensation reverted`,
            ),
          ];
    case "not_achieved": {
      const unrun = report.filter((a) => a.latest === null);
      if (unrun.length)
        return unrun.map((a) =>
          gap(
            a.id,
            `acceptance ${a.id} has not run on the current revision ${state.revision}: a not_achieved closure needs every item's receipt (coverage)`,
          ),
        );
      return report.every((a) => a.proved)
        ? [
            gap(
              null,
              "every acceptance item is proved on the current revision: the goal is achieved, not not_achieved (close it again as achieved)",
            ),
          ]
        : [];
    }
  }
}

export interface Closure {
  terminal: boolean;
  gaps: FrontierGap[];
  /** The closure intent's outcome (null: none recorded). Terminal with a negative outcome is never "achieved". */
  outcome: ClosureOutcome | null;
}

/** Terminal closure: true only when the frontier has no gap at all. */
export function terminalClosure(state: GoalState, ctx: GoalContext, assessed?: Assessment): Closure {
  const gaps = frontierGaps(state, ctx, assessed);
  return { terminal: state.created && gaps.length === 0, gaps, outcome: state.noFollowup?.outcome ?? null };
}
