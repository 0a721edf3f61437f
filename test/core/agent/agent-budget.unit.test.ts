import { describe, expect, it } from "vitest";
import {
  aborted,
  type BudgetView,
  budgetStops,
  costAtLeast,
  firstStop,
  retryBackoff,
  stepsPerTurnIs,
  tokensAtLeast,
  wallTimeAtLeast,
} from "../../../src/core/agent/agent-budget.js";

const view = (over: Partial<BudgetView> = {}): BudgetView => ({
  stepsInTurn: 0,
  usage: { tokens: 0, costUsd: 0 },
  now: 0,
  ...over,
});

describe("stop rules", () => {
  it("stepsPerTurnIs(n) applies at n steps, not before", () => {
    expect(stepsPerTurnIs(3)(view({ stepsInTurn: 2 }))).toBeNull();
    expect(stepsPerTurnIs(3)(view({ stepsInTurn: 3 }))).toEqual({
      kind: "cap",
      cap: { cap: "steps_per_turn", limit: 3, used: 3 },
    });
  });
  it("tokensAtLeast(n) applies at n tokens, not before", () => {
    expect(tokensAtLeast(100)(view({ usage: { tokens: 99, costUsd: 0 } }))).toBeNull();
    expect(tokensAtLeast(100)(view({ usage: { tokens: 120, costUsd: 0 } }))).toEqual({
      kind: "cap",
      cap: { cap: "tokens", limit: 100, used: 120 },
    });
  });
  it("costAtLeast(x) applies at x dollars and records the figure rounded to a millionth", () => {
    expect(costAtLeast(0.5)(view({ usage: { tokens: 0, costUsd: 0.4999 } }))).toBeNull();
    expect(costAtLeast(0.5)(view({ usage: { tokens: 0, costUsd: 0.50000049 } }))).toEqual({
      kind: "cap",
      cap: { cap: "cost_usd", limit: 0.5, used: 0.5 },
    });
  });
  it("wallTimeAtLeast(ms, since) measures from `since` with the clock passed in", () => {
    expect(wallTimeAtLeast(1000, 5000)(view({ now: 5999 }))).toBeNull();
    expect(wallTimeAtLeast(1000, 5000)(view({ now: 6500 }))).toEqual({
      kind: "cap",
      cap: { cap: "wall_time", limit: 1000, used: 1500 },
    });
  });
  it("aborted(signal) applies once the signal is aborted", () => {
    const signal = { aborted: false };
    const rule = aborted(signal);
    expect(rule(view())).toBeNull();
    signal.aborted = true;
    expect(rule(view())).toEqual({ kind: "interrupted" });
    expect(aborted(undefined)(view())).toBeNull();
  });
  it("firstStop composes: the first rule in the list that applies wins", () => {
    const v = view({ stepsInTurn: 5, usage: { tokens: 500, costUsd: 0 } });
    expect(firstStop([tokensAtLeast(100), stepsPerTurnIs(5)], v)).toMatchObject({ cap: { cap: "tokens" } });
    expect(firstStop([stepsPerTurnIs(5), tokensAtLeast(100)], v)).toMatchObject({
      cap: { cap: "steps_per_turn" },
    });
    expect(firstStop([stepsPerTurnIs(6), tokensAtLeast(1000)], v)).toBeNull();
  });
  it("budgetStops keeps the old order: interrupt, steps, tokens, cost, wall time; absent caps never apply", () => {
    const rules = budgetStops(
      { turns: 3, stepsPerTurn: 10, tokens: 50, costUsd: 1, wallMs: 10, modelRetries: 3 },
      0,
    );
    const all = view({ stepsInTurn: 10, usage: { tokens: 50, costUsd: 1 }, now: 10 });
    expect(rules.map((r) => r(all))).toEqual([
      null,
      { kind: "cap", cap: { cap: "steps_per_turn", limit: 10, used: 10 } },
      { kind: "cap", cap: { cap: "tokens", limit: 50, used: 50 } },
      { kind: "cap", cap: { cap: "cost_usd", limit: 1, used: 1 } },
      { kind: "cap", cap: { cap: "wall_time", limit: 10, used: 10 } },
    ]);
    const bare = budgetStops({ turns: 3, stepsPerTurn: 10, modelRetries: 3 }, 0);
    expect(firstStop(bare, view({ usage: { tokens: 1e9, costUsd: 1e6 }, now: 1e12 }))).toBeNull();
  });
});

describe("retryBackoff", () => {
  it("doubles from 500 ms, honours retry-after, caps at 30 s, and stops after the retries or when not retryable", () => {
    expect(retryBackoff({ retryable: true }, 0, 3)).toBe(500);
    expect(retryBackoff({ retryable: true }, 2, 3)).toBe(2000);
    expect(retryBackoff({ retryable: true, retryAfterMs: 45_000 }, 0, 3)).toBe(30_000);
    expect(retryBackoff({ retryable: true, retryAfterMs: 5 }, 1, 3)).toBe(5);
    expect(retryBackoff({ retryable: true }, 3, 3)).toBeNull();
    expect(retryBackoff({ retryable: false }, 0, 3)).toBeNull();
  });
});
