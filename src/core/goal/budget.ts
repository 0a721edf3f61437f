import type { GoalState } from "./goal-state-shape.js";

/** What the goal has spent against its quota at `now`. */
export interface BudgetUsage {
  windowSeconds: number;
  /** Turns charged within the window ending at `now`. */
  turnsInWindow: number;
  turnsPerWindow: number | null;
  /** Lifetime totals. */
  tokens: number;
  maxTokens: number | null;
  costUsd: number;
  maxCostUsd: number | null;
  /** The caps that are spent: `turns_per_window`, `max_tokens`, `max_cost_usd`. Empty: budget left. */
  exhausted: string[];
  /** When the turn window frees a turn again (null if no window cap is what is spent). */
  windowReopensAt: string | null;
}

/** The goal's budget use at `now`: turns per window, tokens and cost over the goal's life. */
export function budgetUsage(state: GoalState, now: Date): BudgetUsage {
  const b = state.budget;
  const t = now.getTime();
  const start = t - b.window_seconds * 1000;
  const inWindow = state.spends.filter((s) => {
    const at = Date.parse(s.at);
    return at > start && at <= t;
  });
  const turns = inWindow.reduce((n, s) => n + s.turns, 0);
  const tokens = state.spends.reduce((n, s) => n + s.tokens, 0);
  const cost = state.spends.reduce((n, s) => n + s.costUsd, 0);
  const exhausted: string[] = [];
  let reopens: string | null = null;
  if (b.turns_per_window !== undefined && turns >= b.turns_per_window) {
    exhausted.push("turns_per_window");
    // The window frees a turn when enough of its oldest spends age out.
    const sorted = inWindow
      .map((s) => ({ at: Date.parse(s.at), turns: s.turns }))
      .sort((x, y) => x.at - y.at);
    let left = turns;
    for (const s of sorted) {
      left -= s.turns;
      if (left < b.turns_per_window) {
        reopens = new Date(s.at + b.window_seconds * 1000).toISOString();
        break;
      }
    }
  }
  if (b.max_tokens !== undefined && tokens >= b.max_tokens) exhausted.push("max_tokens");
  if (b.max_cost_usd !== undefined && cost >= b.max_cost_usd) exhausted.push("max_cost_usd");
  return {
    windowSeconds: b.window_seconds,
    turnsInWindow: turns,
    turnsPerWindow: b.turns_per_window ?? null,
    tokens,
    maxTokens: b.max_tokens ?? null,
    costUsd: cost,
    maxCostUsd: b.max_cost_usd ?? null,
    exhausted,
    // A lifetime cap never reopens by itself: the owner must change the budget.
    windowReopensAt: exhausted.length === 1 && exhausted[0] === "turns_per_window" ? reopens : null,
  };
}
