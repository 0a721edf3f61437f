import { describe, expect, it } from "vitest";
import type { GoalEventBody } from "../../../../src/core/events/goal/goal-events.js";
import type { TurnEvent } from "../../../../src/core/events/goal/turn-events.js";
import { LoopgateEvent } from "../../../../src/core/events/loopgate-event.js";
import { foldGoal } from "../../../../src/core/goal/goal-state.js";
import { nextTurnPhase } from "../../../../src/core/goal/turn/turn-decider.js";
import { adv, created, spec } from "../goal-fixtures.js";
import * as f from "./turn-fixtures.js";

// Turn facts are goal-stream events, folded by identity. That each one the turn decider emits is declared,
// with the runtime origin, and parses: test/core/events/goal/goal-events-emitted.unit.test.ts.
const facts: TurnEvent[] = [
  f.bound,
  f.hxPrepared,
  f.executed,
  f.typed,
  f.validated,
  f.wbPrepared,
  f.written,
  f.spent,
];
const asGoal = (es: TurnEvent[]): GoalEventBody[] => es;
const event = (e: TurnEvent) => ({
  id: "e1",
  ...e,
  meta: { at: "2026-12-01T10:00:00.000Z", origin: "runtime" },
});

describe("turn facts in the goal stream", () => {
  it("a malformed turn fact is refused by the schema (no identity, an unknown phase)", () => {
    const { identity: _gone, ...noId } = f.bound.data;
    expect(LoopgateEvent.safeParse(event({ ...f.bound, data: noId } as unknown as TurnEvent)).success).toBe(
      false,
    );
    const badPhase = { ...f.hxPrepared, data: { ...f.hxPrepared.data, phase: "typed_result" } };
    expect(LoopgateEvent.safeParse(event(badPhase as unknown as TurnEvent)).success).toBe(false);
  });

  it("the goal fold keeps each turn's state by its key, next phase included", () => {
    const s = foldGoal([...created(spec([adv("todo_parse")])), ...asGoal(facts)]);
    const t = s.turns[f.KEY];
    expect(s.turnOrder).toEqual([f.KEY]);
    expect(t?.writeback?.commit).toBe("c1");
    expect(t && nextTurnPhase(t)).toEqual({ kind: "scheduler_apply", effectRef: f.SA });
    expect(s.anomalies).toEqual([]);
  });

  it("a fact of a turn never bound, or a second bind, is an anomaly, not applied", () => {
    const s = foldGoal([...created(spec([adv("todo_parse")])), ...asGoal([f.executed, f.bound, f.bound])]);
    expect(s.anomalies).toHaveLength(2);
    expect(s.anomalies[0]).toMatch(/turn goal_csv\/builder\/t1 was never bound/);
    expect(s.anomalies[1]).toMatch(/already bound/);
    expect(s.turns[f.KEY]?.host).toBeNull();
  });
});
