import { describe, expect, it } from "vitest";
import type { GoalEventBody, TodoSpec } from "../../../src/core/events/goal/goal-events.js";
import { goalDecider } from "../../../src/core/goal/goal-decider.js";
import { foldGoal } from "../../../src/core/goal/goal-state.js";
import { type ReplanAnswer, type ReplanCommand, replanOperation } from "../../../src/core/goal/replan.js";
import { assess } from "../../../src/core/goal/runtime-state.js";
import { given } from "../../support/decider.js";
import { accepted, adv, completed, created, REV0, revision, spec } from "./goal-fixtures.js";

// What answers a replan obligation: a real delta, or replan_noop that leaves it open.

const NOW = "2026-12-01T12:00:00.000Z";
const ctx = { now: new Date(NOW), health: [] };
const A = "agent_main";
const CP = { goal_revision: REV0, acceptance_version: 0 };
const vision: GoalEventBody = {
  type: "vision_recorded",
  data: { agent_id: A, route: "route A", checkpoint: CP },
};
/** Every advancement todo done, acceptance failed on the current revision: a replan obligation. */
const owing: GoalEventBody[] = [
  ...created(spec([adv("todo_a")])),
  completed("todo_a"),
  vision,
  accepted(REV0, { status: "ESCALATED" }),
];
const OBL = "replan_acceptance_failed:acc_all";
const fix = adv("todo_fix");
const g = (events: GoalEventBody[] = owing) => given(goalDecider, events);
const answer = (a: Partial<ReplanAnswer>) => ({
  type: "answer_replan" as const,
  answer: { agent_id: A, obligation: OBL, ...a },
});
const kinds = (events: GoalEventBody[]) => assess(foldGoal(events), ctx).obligations.map((o) => o.kind);
const patch = {
  kind: "patch" as const,
  patch: "add a fix step",
  route: "route B",
  reason: "acceptance failed",
};

describe("replan answers", () => {
  it("the state owes a replan", () => {
    expect(kinds(owing)).toEqual(["replan_acceptance_failed"]);
  });
  it("must reject: a vision patch without a todo or acceptance change", () => {
    g()
      .when(answer({ vision: patch }))
      .thenError(/patch_without_delta/);
  });
  it("no delta is replan_noop: recorded, and the obligation is NOT cleared", () => {
    const events = g()
      .when(answer({ reason: "I replanned" }))
      .thenEvents([
        { type: "replan_noop_recorded", data: { agent_id: A, obligation: OBL, reason: "I replanned" } },
      ]);
    const after = [...owing, ...events];
    expect(kinds(after)).toEqual(["replan_acceptance_failed"]);
    expect(foldGoal(after).replanNoops).toHaveLength(1);
  });
  it("a patch with a todo is a real delta: the vision patched and the todo added in one batch; the obligation clears", () => {
    const events = g()
      .when(answer({ vision: patch, todos: [{ todo: fix }] }))
      .thenEvents([
        {
          type: "vision_patched",
          data: {
            agent_id: A,
            patch: "add a fix step",
            route: "route B",
            reason: "acceptance failed",
            checkpoint: CP,
          },
        },
        { type: "todo_added", data: { todo: fix, successor_of: null } },
      ]);
    expect(kinds([...owing, ...events])).toEqual([]);
  });
  it("a patch with an acceptance change is a real delta too; the vision is read against the new acceptance", () => {
    const acc = [{ id: "acc_all", kind: "task" as const, ref: "tasks/acceptance2.yaml", digest: "sha-acc2" }];
    const events = g()
      .when(answer({ vision: patch, acceptance: { acceptance: acc, reason: "narrower" } }))
      .events();
    expect(events.map((e) => e.type)).toEqual(["goal_acceptance_changed", "vision_patched"]);
    expect(events[1]?.data).toMatchObject({ checkpoint: { acceptance_version: 1 } });
  });
  it("vision_unchanged_reason where the route holds answers it", () => {
    const events = g()
      .when(answer({ vision: { kind: "unchanged", reason: "a flaky run; the route holds" } }))
      .events();
    expect(events.map((e) => e.type)).toEqual(["vision_unchanged_recorded"]);
    expect(kinds([...owing, ...events])).toEqual([]);
  });
  it("must reject: vision_closed without a successor; with one, the successor is added just before it", () => {
    g()
      .when(answer({ vision: { kind: "close", reason: "stage done" } }))
      .thenError(/vision_closed_needs_successor/);
    const next: TodoSpec = { id: "todo_stage2", content: "start stage 2", class: "user_action" };
    g()
      .when(answer({ vision: { kind: "close", reason: "stage done" }, todos: [{ todo: next }] }))
      .thenEvents([
        { type: "todo_added", data: { todo: next, successor_of: null } },
        {
          type: "vision_closed",
          data: { agent_id: A, reason: "stage done", successor_id: "todo_stage2", checkpoint: CP },
        },
      ]);
  });
  it("must reject: a forged vision_closed with no successor added before it (the fold refuses it)", () => {
    const forged: GoalEventBody = {
      type: "vision_closed",
      data: { agent_id: A, reason: "x", successor_id: "todo_a", checkpoint: CP },
    };
    const st = foldGoal([...owing, forged]);
    expect(st.anomalies).toHaveLength(1);
    expect(st.visions[A]?.last).toBe("recorded");
  });
  it("must reject: todos without saying whether the route changed", () => {
    g()
      .when(answer({ todos: [{ todo: fix }] }))
      .thenError(/vision_statement_missing/);
  });
  it("must reject: a no_followup intent together with new work", () => {
    g()
      .when(answer({ no_followup: { rationale: "done" }, todos: [{ todo: fix }], vision: patch }))
      .thenError(/no_followup_with_new_work/);
  });
  it("must reject: a patch whose route is the current one", () => {
    g()
      .when(answer({ vision: { ...patch, route: "route A" }, todos: [{ todo: fix }] }))
      .thenError(/replan_noop/);
  });
  it("must reject: a refused todo in the answer refuses the whole answer (nothing half-applied)", () => {
    g()
      .when(answer({ vision: patch, todos: [{ todo: fix }, { todo: { ...fix } }] }))
      .thenError(/already exists/);
  });
  it("a bare vision patch (the old patch_vision command) no longer clears the obligation: its delta does", () => {
    const bare = g()
      .when({ type: "patch_vision", agentId: A, patch: "p", route: "route C", reason: "r" })
      .events();
    expect(kinds([...owing, ...bare])).toEqual(["replan_acceptance_failed"]);
  });
});

describe("replan answers under an operation id (a planner turn's writeback)", () => {
  it("the answer ends with its receipt; the same operation id again decides nothing; readback finds it", () => {
    const events = g()
      .when(answer({ vision: patch, todos: [{ todo: fix }], operation_id: "op_plan1" }))
      .events();
    expect(events.map((e) => e.type)).toEqual(["vision_patched", "todo_added", "replan_answered"]);
    expect(events[2]?.data).toEqual({
      agent_id: A,
      obligation: OBL,
      operation_id: "op_plan1",
      outcome: "delta",
    });
    const after = [...owing, ...events];
    g(after)
      .when(answer({ vision: patch, todos: [{ todo: adv("todo_other") }], operation_id: "op_plan1" }))
      .thenEvents([]);
    expect(replanOperation(foldGoal(after), "op_plan1")).toMatchObject({ outcome: "delta" });
    expect(replanOperation(foldGoal(after), "op_never")).toBeNull();
  });
  it("a no-delta answer under an operation id: replan_noop and its receipt; the obligation stays", () => {
    const events = g()
      .when(answer({ operation_id: "op_plan2" }))
      .events();
    expect(events.map((e) => e.type)).toEqual(["replan_noop_recorded", "replan_answered"]);
    expect(kinds([...owing, ...events])).toEqual(["replan_acceptance_failed"]);
  });
  it("must reject: a forged second receipt of one operation (the fold refuses it)", () => {
    const r: GoalEventBody = {
      type: "replan_answered",
      data: { agent_id: A, obligation: OBL, operation_id: "op_x", outcome: "delta" },
    };
    expect(foldGoal([...owing, r, r]).anomalies).toHaveLength(1);
  });
});

describe("rollback of an accepted change is a compensation", () => {
  const moved = [...owing, revision(REV0, "rev1")];
  const succ: TodoSpec = {
    id: "todo_redo",
    content: "redo the change without the regression",
    class: "user_action",
  };
  const comp = (over: Partial<Extract<ReplanCommand, { type: "compensate_change" }>> = {}) => ({
    type: "compensate_change" as const,
    revertedRevision: "rev1",
    revertRevision: "rev2",
    reason: "rev1 broke CRLF input",
    successor: succ,
    ...over,
  });
  it("appends the revert commit as the new revision, the successor and the receipt; history stays", () => {
    const events = given(goalDecider, moved)
      .when(comp())
      .thenEvents([
        {
          type: "goal_revision_recorded",
          data: { revision: "rev2", previous: "rev1", reason: "revert rev1: rev1 broke CRLF input" },
        },
        { type: "todo_added", data: { todo: succ, successor_of: null } },
        {
          type: "change_compensated",
          data: {
            reverted_revision: "rev1",
            revert_revision: "rev2",
            reason: "rev1 broke CRLF input",
            successor_id: "todo_redo",
          },
        },
      ]);
    const st = foldGoal([...moved, ...events]);
    expect(st.revisionHistory).toEqual([REV0, "rev1", "rev2"]);
    expect(st.compensations).toHaveLength(1);
    expect(st.anomalies).toEqual([]);
  });
  it("must reject: a revision that was never an accepted change, a second compensation, a reused revision", () => {
    given(goalDecider, moved)
      .when(comp({ revertedRevision: REV0 }))
      .thenError(/compensates_accepted_change/);
    given(goalDecider, moved)
      .when(comp({ revertedRevision: "rev9" }))
      .thenError(/compensates_accepted_change/);
    given(goalDecider, moved)
      .when(comp({ revertRevision: REV0 }))
      .thenError(/history_is_append_only/);
    const done = [...moved, ...given(goalDecider, moved).when(comp()).events()];
    given(goalDecider, done)
      .when(comp({ revertRevision: "rev3", successor: { ...succ, id: "todo_redo2" } }))
      .thenError(/compensate_once/);
  });
  it("must reject: a compensation without a successor todo (the fold refuses a forged one)", () => {
    const forged: GoalEventBody[] = [
      revision("rev1", "rev2"),
      {
        type: "change_compensated",
        data: {
          reverted_revision: "rev1",
          revert_revision: "rev2",
          reason: "x",
          successor_id: "todo_nobody",
        },
      },
    ];
    expect(foldGoal([...moved, ...forged]).anomalies).toHaveLength(1);
  });
});
