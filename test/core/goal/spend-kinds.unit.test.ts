import { describe, expect, it } from "vitest";
import type { GoalEventBody } from "../../../src/core/events/goal/goal-events.js";
import { foldGoal } from "../../../src/core/goal/goal-state.js";
import { spendByKind } from "../../../src/core/goal/spend-kinds.js";
import { adv, created, GOAL, monitor, REV0, spec } from "./goal-fixtures.js";

// The goal's spend by kind of turn: each spend receipt is counted under the work its turn was bound to.

const identity = (t: string) => ({ goal_id: GOAL, agent_id: "agent_main", turn_instance_id: t });
const key = (t: string) => `${GOAL}/agent_main/${t}`;
const bound = (t: string, work: object): GoalEventBody =>
  ({ type: "turn_bound", data: { identity: identity(t), work, base_revision: REV0 } }) as GoalEventBody;
const spent = (t: string, turns: number, tokens = 0, cost_usd = 0): GoalEventBody => ({
  type: "quota_spent",
  data: { turn_id: key(t), at: "2026-12-01T10:00:00.000Z", turns, tokens, cost_usd },
});

describe("spend by kind", () => {
  it("sums each kind's turns, tokens and cost; a 0-turn spend (a failed poll) is settled but uncharged", () => {
    const log: GoalEventBody[] = [
      ...created(spec([adv("todo_fix"), monitor("todo_watch")])),
      bound("t1", { kind: "todo", todo_id: "todo_fix" }),
      spent("t1", 1, 500, 0.02),
      bound("t2", { kind: "todo", todo_id: "todo_watch" }),
      spent("t2", 1),
      bound("t3", { kind: "todo", todo_id: "todo_watch" }),
      spent("t3", 0),
      bound("t4", { kind: "replan", obligation_id: "obl1" }),
      spent("t4", 1, 120, 0.01),
      bound("t5", { kind: "acceptance", acceptance_ids: ["acc_all"] }),
      spent("t5", 1),
    ];
    const s = foldGoal(log);
    expect(s.anomalies).toEqual([]);
    expect(spendByKind(s)).toEqual([
      { kind: "todo", turns: 1, tokens: 500, costUsd: 0.02, settled: 1, uncharged: 0 },
      { kind: "monitor", turns: 1, tokens: 0, costUsd: 0, settled: 2, uncharged: 1 },
      { kind: "acceptance", turns: 1, tokens: 0, costUsd: 0, settled: 1, uncharged: 0 },
      { kind: "replan", turns: 1, tokens: 120, costUsd: 0.01, settled: 1, uncharged: 0 },
    ]);
  });
  it("a spend whose turn is not in the log is counted as other, never dropped", () => {
    const s = foldGoal([...created(spec([adv("todo_fix")])), spent("t9", 1)]);
    expect(spendByKind(s)).toEqual([
      { kind: "other", turns: 1, tokens: 0, costUsd: 0, settled: 1, uncharged: 0 },
    ]);
  });
});
