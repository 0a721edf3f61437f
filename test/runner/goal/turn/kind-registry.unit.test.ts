import { describe, expect, it } from "vitest";
import type { TurnWork } from "../../../../src/core/events/goal/turn-events.js";
import { type GoalState, initialState } from "../../../../src/core/goal/goal-state-shape.js";
import { TURN_KINDS, TURN_WORK_KINDS } from "../../../../src/core/goal/turn/turn-kinds.js";
import { initialTurnState, type TurnState } from "../../../../src/core/goal/turn/turn-state.js";
import { LoopgateError } from "../../../../src/core/kernel/errors.js";
import { kindOfTurn, registeredKinds, turnKind } from "../../../../src/runner/goal/turn/kind-registry.js";

const METHODS = [
  "select",
  "execute",
  "readback",
  "typedResult",
  "validate",
  "writeback",
  "usage",
  "summary",
  "todoOf",
] as const;

/** A goal holding one advancement todo `a1` and one continuous monitor `m1`. */
function goal(): GoalState {
  const s = initialState();
  s.todos = {
    a1: { id: "a1", class: "advancement_task" },
    m1: { id: "m1", class: "continuous_monitor" },
  } as unknown as GoalState["todos"];
  return s;
}

const bound = (work: TurnWork): TurnState => ({ ...initialTurnState(), work });

describe("the turn kind registry", () => {
  it("has an implementation for every kind of work the turn decider binds", () => {
    expect(TURN_WORK_KINDS.length).toBeGreaterThan(0);
    for (const name of TURN_WORK_KINDS) expect(turnKind(name).name).toBe(name);
  });

  it("holds exactly the turn kinds core names, each implementing every phase", () => {
    expect([...registeredKinds()].sort()).toEqual([...TURN_KINDS].sort());
    for (const name of TURN_KINDS) {
      const kind = turnKind(name);
      expect(kind.name).toBe(name);
      for (const m of METHODS) expect(typeof kind[m], `${name}.${m}`).toBe("function");
    }
  });

  it("refuses an unknown kind, inherited object keys included", () => {
    for (const name of ["merge", "", "TODO", "toString", "__proto__", "constructor"]) {
      let caught: unknown = null;
      try {
        turnKind(name);
      } catch (e) {
        caught = e;
      }
      expect(caught, name).toBeInstanceOf(LoopgateError);
      expect((caught as LoopgateError).code).toBe("unknown_turn_kind");
    }
  });

  it("classifies a bound turn by its work; a todo that is a continuous monitor is a monitor turn", () => {
    const s = goal();
    expect(kindOfTurn(s, bound({ kind: "todo", todo_id: "a1" })).name).toBe("todo");
    expect(kindOfTurn(s, bound({ kind: "todo", todo_id: "m1" })).name).toBe("monitor");
    expect(kindOfTurn(s, bound({ kind: "replan", obligation_id: "o1" })).name).toBe("replan");
    expect(kindOfTurn(s, bound({ kind: "acceptance", acceptance_ids: ["acc1"] })).name).toBe("acceptance");
  });

  it("refuses a turn whose work kind it does not know (never settled as a todo)", () => {
    const alien = { ...initialTurnState(), work: { kind: "merge" } } as unknown as TurnState;
    expect(() => kindOfTurn(goal(), alien)).toThrow(/no turn kind "merge"/);
  });

  it("names the todo in progress lines for a todo's run and a monitor's poll only", () => {
    expect(turnKind("todo").todoOf({ kind: "todo", todo_id: "a1" })).toBe("a1");
    expect(turnKind("monitor").todoOf({ kind: "todo", todo_id: "m1" })).toBe("m1");
    expect(turnKind("replan").todoOf({ kind: "replan", obligation_id: "o1" })).toBeNull();
    expect(turnKind("acceptance").todoOf({ kind: "acceptance", acceptance_ids: ["acc1"] })).toBeNull();
  });
});
