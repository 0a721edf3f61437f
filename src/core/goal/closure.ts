import type { GoalState, TodoState } from "./goal-state-shape.js";
import { handoffs } from "./handoff.js";
import { acceptanceReport } from "./obligations.js";
import { type Assessment, assess, type GoalContext } from "./runtime-state.js";

/**
 * The frontier and terminal closure: a strict conjunction, never "the queue looks empty". Terminal holds
 * only when every item below is absent: no unfinished todo of any class, no unfinished successor, no
 * blocking or unrouted handoff, no replan obligation, every acceptance item proved by a SUCCESS on the
 * current revision, no health issue (autonomy blocker), a recorded no_followup intent, and a goal that
 * is active and not throttled.
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
  for (const o of assessed.obligations)
    if (o.kind !== "closeout") gaps.push({ kind: "replan", subject: o.subject, detail: o.detail });
  for (const a of acceptanceReport(state))
    if (!a.proved)
      gaps.push({
        kind: "acceptance",
        subject: a.id,
        detail: a.latest
          ? `acceptance ${a.id} ended ${a.latest.status} on revision ${state.revision}`
          : `acceptance ${a.id} has no SUCCESS on the current revision ${state.revision}`,
      });
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

export interface Closure {
  terminal: boolean;
  gaps: FrontierGap[];
}

/** Terminal closure: true only when the frontier has no gap at all. */
export function terminalClosure(state: GoalState, ctx: GoalContext, assessed?: Assessment): Closure {
  const gaps = frontierGaps(state, ctx, assessed);
  return { terminal: state.created && gaps.length === 0, gaps };
}
