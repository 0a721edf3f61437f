import type { GoalState } from "./goal-state-shape.js";

/**
 * What the goal spent, by the kind of turn that spent it: a projection of the recorded spends and the
 * work each spending turn was bound to. Pure; never stored.
 */
export type SpendKind = "todo" | "monitor" | "acceptance" | "replan" | "other";

export interface KindSpend {
  kind: SpendKind;
  /** Turns charged (a turn that delivered nothing is charged 0: a failed poll). */
  turns: number;
  tokens: number;
  costUsd: number;
  /** Settled turns of this kind with a spend receipt, and how many of them were charged 0 turns. */
  settled: number;
  uncharged: number;
}

const ORDER: readonly SpendKind[] = ["todo", "monitor", "acceptance", "replan", "other"];

function kindOf(state: GoalState, turnId: string): SpendKind {
  const work = state.turns[turnId]?.work;
  if (!work) return "other";
  if (work.kind !== "todo") return work.kind;
  return state.todos[work.todo_id]?.class === "continuous_monitor" ? "monitor" : "todo";
}

/** The goal's lifetime spend by kind of turn, in a fixed order; kinds that spent nothing are left out. */
export function spendByKind(state: GoalState): KindSpend[] {
  const by = new Map<SpendKind, KindSpend>();
  for (const s of state.spends) {
    const kind = kindOf(state, s.turnId);
    const k = by.get(kind) ?? { kind, turns: 0, tokens: 0, costUsd: 0, settled: 0, uncharged: 0 };
    k.turns += s.turns;
    k.tokens += s.tokens;
    k.costUsd += s.costUsd;
    k.settled += 1;
    if (s.turns === 0) k.uncharged += 1;
    by.set(kind, k);
  }
  return ORDER.flatMap((k) => {
    const v = by.get(k);
    return v ? [v] : [];
  });
}
