import { describe, expect, it } from "vitest";
import { goalEventOrigin, goalEvents, goalEventTypes } from "../../../src/core/events/goal/goal-events.js";
import { LoopgateEvent } from "../../../src/core/events/loopgate-event.js";
import { interactionContract } from "../../../src/core/goal/contract.js";
import { encodeContract } from "../../../src/core/goal/contract-wire.js";
import { scopeWaits } from "../../../src/core/goal/gates.js";
import { foldGoal } from "../../../src/core/goal/goal-state.js";
import type { TodoState } from "../../../src/core/goal/goal-state-shape.js";
import { adv, approved, created, gate, spec } from "./goal-fixtures.js";

const NOW = "2026-12-01T12:00:00.000Z";
const ctx = { now: new Date(NOW), health: [] };

describe("gates: scopes", () => {
  it("a goal-wide gate covers every action until approved", () => {
    const ev = created(
      spec([gate("todo_go", "go", { global_gate: true }), adv("todo_one_more"), adv("todo_two_more")]),
    );
    const c = encodeContract(interactionContract(foldGoal(ev), ctx));
    expect(c.runtime_state).toBe("operator_gate");
    expect(c.user_channel.gates[0]?.covers).toEqual(["todo_one_more", "todo_two_more"]);
    expect(
      encodeContract(interactionContract(foldGoal([...ev, approved("todo_go")]), ctx)).agent_channel
        .selected_todo,
    ).toBe("todo_one_more");
  });
  it("a rejected scope holds its todo for a person to supersede or close (operator_gate)", () => {
    const ev = created(
      spec([gate("todo_pub", "publish"), adv("todo_release", { required_decision_scopes: ["publish"] })]),
    );
    const st = foldGoal([
      ...ev,
      { type: "gate_decided", data: { todo_id: "todo_pub", decision: "rejected", note: "not yet" } },
    ]);
    const c = encodeContract(interactionContract(st, ctx));
    expect(c.runtime_state).toBe("operator_gate");
    expect(c.user_channel.actions).toEqual([
      {
        todo_id: "todo_release",
        action: "rejected_scope",
        detail: "scope publish was rejected: supersede it or close it with no_followup",
      },
    ]);
  });
  it("a scope nobody asks for is reported missing, never approved", () => {
    const st = foldGoal(created(spec([adv("todo_release", { required_decision_scopes: ["legal"] })])));
    expect(scopeWaits(st, st.todos.todo_release as TodoState)).toEqual([
      { scope: "legal", status: "missing", gates: [] },
    ]);
  });
});

describe("goal events in the one union", () => {
  it("every goal event type is a variant of LoopgateEvent, and a store would accept one", () => {
    const e = created(spec([adv("todo_one_more")]))[1];
    expect(LoopgateEvent.parse({ id: "ev1", ...e, meta: { at: NOW, origin: "operator" } }).type).toBe(
      "todo_added",
    );
    for (const t of goalEventTypes)
      expect(LoopgateEvent.options.some((o) => o.shape.type.value === t)).toBe(true);
  });
  it("no status enters through todo_added (stripped), and a deferral without a machine-readable resume_when fails its schema", () => {
    const bad = {
      id: "ev2",
      type: "todo_added",
      data: { todo: { ...adv("todo_one_more"), status: "running" }, successor_of: null },
      meta: { at: NOW, origin: "operator" },
    };
    const parsed = LoopgateEvent.parse(bad);
    expect(parsed.type === "todo_added" && "status" in parsed.data.todo).toBe(false);
    expect(
      goalEvents.todo_deferred.schema.safeParse({ todo_id: "todo_one_more", resume_when: "later", note: "" })
        .success,
    ).toBe(false);
  });
  it("origins: a person's commands are operator facts; receipts and revisions are runtime facts", () => {
    expect(goalEventOrigin("gate_decided", true)).toBe("operator");
    expect(goalEventOrigin("todo_completed", true)).toBe("runtime");
    expect(goalEventOrigin("goal_revision_recorded", false)).toBe("runtime");
    expect(goalEventOrigin("todo_added", false)).toBe("runtime");
  });
});
