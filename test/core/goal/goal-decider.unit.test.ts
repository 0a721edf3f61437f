import { describe, expect, it } from "vitest";
import { goalDecider } from "../../../src/core/goal/goal-decider.js";
import { given } from "../../support/decider.js";
import { adv, completed, created, GOAL, gate, receipt, spec } from "./goal-fixtures.js";

describe("goal decider: creation", () => {
  it("create_goal emits goal_created and one todo_added per declared todo, in order", () => {
    const s = spec([adv("todo_parse"), gate("todo_publish", "publish")]);
    given(goalDecider, []).when({ type: "create_goal", goal: s }).thenEvents(created(s));
  });
  it("a second create_goal is refused", () => {
    given(goalDecider, created())
      .when({ type: "create_goal", goal: spec() })
      .thenError(`goal ${GOAL} already exists`);
  });
});

describe("goal decider: completion needs a validation receipt", () => {
  const base = created(spec([adv("todo_parse")]));
  it("a SUCCESS of the todo's task on the current revision completes it", () => {
    given(goalDecider, base)
      .when({ type: "complete_todo", todo_id: "todo_parse", receipt: receipt("todo_parse") })
      .thenEvents([completed("todo_parse")]);
  });
  it("operator done without evidence is refused", () => {
    given(goalDecider, base)
      .when({ type: "complete_todo", todo_id: "todo_parse" })
      .thenError(/done_needs_receipt/);
  });
  it("a receipt of another revision is refused", () => {
    given(goalDecider, base)
      .when({
        type: "complete_todo",
        todo_id: "todo_parse",
        receipt: receipt("todo_parse", { goal_revision: "old" }),
      })
      .thenError(/receipt_on_current_revision/);
  });
  it("the fold records the completion evidence", () => {
    const st = given(goalDecider, [...base, completed("todo_parse")]).state();
    expect(st.todos.todo_parse?.status).toBe("done");
    expect(st.todos.todo_parse?.completion?.run_id).toBe("run_todo_parse");
  });
});
