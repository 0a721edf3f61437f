import { describe, expect, it } from "vitest";
import { interactionContract } from "../../../src/core/goal/contract.js";
import { foldGoal } from "../../../src/core/goal/goal-state.js";
import { adv, approved, created, gate, spec } from "./goal-fixtures.js";

const NOW = "2026-12-01T12:00:00.000Z";
const ctx = { now: NOW, health: [] };

describe("interaction contract", () => {
  // The seed's example: the homepage waits for approval of its publication while the docs todo runs.
  const goal = spec([
    gate("todo_publish", "publish"),
    adv("todo_homepage", { required_decision_scopes: ["publish"] }),
    adv("todo_docs"),
  ]);
  it("a gate waits on the user while gate-independent work is selected: both channels act", () => {
    const c = interactionContract(foldGoal(created(goal)), ctx);
    expect(c.runtime_state).toBe("eligible");
    expect(c.user_channel.action_required).toBe(true);
    expect(c.user_channel.gates.map((g) => [g.gate_id, g.scope, g.covers])).toEqual([
      ["todo_publish", "publish", ["todo_homepage"]],
    ]);
    expect(c.agent_channel.must_attempt).toBe(true);
    expect(c.agent_channel.selected_todo).toBe("todo_docs");
    expect(c.next_cli_actions.map((x) => x.argv.join(" "))).toEqual([
      "loopgate todo run goal_csv todo_docs",
      "loopgate todo done goal_csv todo_docs --evidence RUN_ID",
      "loopgate gate approve goal_csv todo_publish",
    ]);
  });
  it("when only gated work is left the state is operator_gate and nothing is selected", () => {
    const only = spec([
      gate("todo_publish", "publish"),
      adv("todo_homepage", { required_decision_scopes: ["publish"] }),
    ]);
    const c = interactionContract(foldGoal(created(only)), ctx);
    expect(c.runtime_state).toBe("operator_gate");
    expect(c.agent_channel.must_attempt).toBe(false);
    expect(c.agent_channel.selected_todo).toBeNull();
    expect(c.scheduler_hint).toEqual({ action: "ask_user", not_before: null });
  });
  it("after approval the gated todo is selectable", () => {
    const only = spec([
      gate("todo_publish", "publish"),
      adv("todo_homepage", { required_decision_scopes: ["publish"] }),
    ]);
    const c = interactionContract(foldGoal([...created(only), approved("todo_publish")]), ctx);
    expect(c.runtime_state).toBe("eligible");
    expect(c.agent_channel.selected_todo).toBe("todo_homepage");
  });
});
