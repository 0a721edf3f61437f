import { describe, expect, it } from "vitest";
import { interactionContract } from "../../../src/core/goal/contract.js";
import { encodeContract } from "../../../src/core/goal/contract-wire.js";
import { foldGoal } from "../../../src/core/goal/goal-state.js";
import { adv, approved, created, gate, spec } from "./goal-fixtures.js";

const NOW = "2026-12-01T12:00:00.000Z";
const ctx = { now: new Date(NOW), health: [] };

describe("interaction contract", () => {
  // The seed's example: the homepage waits for approval of its publication while the docs todo runs.
  const goal = spec([
    gate("todo_publish", "publish"),
    adv("todo_homepage", { required_decision_scopes: ["publish"] }),
    adv("todo_docs"),
  ]);
  it("is printed in its wire shape: snake_case keys in the order hosts and people read them", () => {
    const c = encodeContract(interactionContract(foldGoal(created(goal)), ctx));
    expect(Object.keys(c)).toEqual([
      "goal_id",
      "runtime_state",
      "reason",
      "user_channel",
      "agent_channel",
      "workspace_guard",
      "scheduler_hint",
      "monitors",
      "next_cli_actions",
      "terminal",
    ]);
    expect(Object.keys(c.user_channel)).toEqual(["action_required", "gates", "actions"]);
    expect(Object.keys(c.agent_channel)).toEqual([
      "must_attempt",
      "selected_todo",
      "selected_action",
      "selection_reason",
    ]);
    expect(c.agent_channel.selected_action && Object.keys(c.agent_channel.selected_action)).toEqual([
      "kind",
      "todo_id",
      "reason",
    ]);
    expect(Object.keys(c.workspace_guard)).toEqual([
      "goal_revision",
      "workspace",
      "require_clean_at_revision",
      "ok",
      "issues",
    ]);
    expect(Object.keys(c.scheduler_hint)).toEqual(["action", "not_before"]);
    expect(c.user_channel.gates.map((g) => Object.keys(g))).toEqual([
      ["gate_id", "scope", "content", "covers", "asked_again"],
    ]);
  });
  it("a gate waits on the user while gate-independent work is selected: both channels act", () => {
    const c = encodeContract(interactionContract(foldGoal(created(goal)), ctx));
    expect(c.runtime_state).toBe("eligible");
    expect(c.user_channel.action_required).toBe(true);
    expect(c.user_channel.gates.map((g) => [g.gate_id, g.scope, g.covers])).toEqual([
      ["todo_publish", "publish", ["todo_homepage"]],
    ]);
    expect(c.agent_channel.must_attempt).toBe(true);
    expect(c.agent_channel.selected_todo).toBe("todo_docs");
    // Only sequences that persist the outcome: a governed turn (its writeback commits the change with
    // the completion), never `todo run` + `todo done`, which writes nothing back.
    expect(c.next_cli_actions.map((x) => x.argv.join(" "))).toEqual([
      "loopgate goal tick goal_csv",
      "loopgate gate approve goal_csv todo_publish",
    ]);
  });
  it("when only gated work is left the state is operator_gate and nothing is selected", () => {
    const only = spec([
      gate("todo_publish", "publish"),
      adv("todo_homepage", { required_decision_scopes: ["publish"] }),
    ]);
    const c = encodeContract(interactionContract(foldGoal(created(only)), ctx));
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
    const c = encodeContract(
      interactionContract(foldGoal([...created(only), approved("todo_publish")]), ctx),
    );
    expect(c.runtime_state).toBe("eligible");
    expect(c.agent_channel.selected_todo).toBe("todo_homepage");
  });
});
