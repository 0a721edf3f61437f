// The rules that make gates guard the effect and "done" mean persisted, on the goal decider and the pure
// deciders around it: durable_writeback_before_done, a deferred gate asked again and deferred anew,
// scope_needs_gate, and which todo runs a person may start (run-admission.ts).
import { describe, expect, it } from "vitest";
import type { GoalEventBody } from "../../../src/core/events/goal/goal-events.js";
import { interactionContract } from "../../../src/core/goal/contract.js";
import { encodeContract } from "../../../src/core/goal/contract-wire.js";
import { pendingGates } from "../../../src/core/goal/gates.js";
import { goalDecider } from "../../../src/core/goal/goal-decider.js";
import { foldGoal } from "../../../src/core/goal/goal-state.js";
import { runRefusal } from "../../../src/core/goal/run-admission.js";
import { given } from "../../support/decider.js";
import { adv, approved, completed, created, GOAL, gate, monitor, receipt, spec } from "./goal-fixtures.js";

const NOW = "2026-12-01T12:00:00.000Z";
const ctx = { now: new Date(NOW), health: [] };
const base = created(
  spec([
    adv("todo_parse"),
    gate("todo_publish", "publish"),
    adv("todo_release", { required_decision_scopes: ["publish"] }),
  ]),
);
const g = (extra: GoalEventBody[] = []) => given(goalDecider, [...base, ...extra]);
const deferGate = (resume_when: unknown): GoalEventBody =>
  ({ type: "todo_deferred", data: { todo_id: "todo_publish", resume_when, note: "" } }) as GoalEventBody;
const spent = (n: number): GoalEventBody[] =>
  Array.from({ length: n }, (_, i) => ({
    type: "quota_spent",
    data: { turn_id: `${GOAL}/agent_main/t${i + 1}`, at: NOW, turns: 1, tokens: 0, cost_usd: 0 },
  }));

describe("done means persisted: rule durable_writeback_before_done", () => {
  it("a receipt whose run changed paths the workspace lacks is refused, naming the rule, the run and the paths", () => {
    g()
      .when({
        type: "complete_todo",
        todoId: "todo_parse",
        receipt: receipt("todo_parse"),
        unwritten: ["bin/csvcol", "README"],
      })
      .thenError(
        /rule durable_writeback_before_done: run run_todo_parse changed 2 path\(s\) \(bin\/csvcol, README\) that the goal workspace does not hold.*goal tick goal_csv/,
      );
  });
  it("a run that changed nothing (its outcome is already in the workspace) completes the todo", () => {
    g()
      .when({ type: "complete_todo", todoId: "todo_parse", receipt: receipt("todo_parse"), unwritten: [] })
      .thenEvents([completed("todo_parse")]);
  });
  it("a governed turn's completion carries its writeback: what the run changed is the commit", () => {
    const events = goalDecider.decide(
      {
        type: "complete_todo",
        todoId: "todo_parse",
        receipt: receipt("todo_parse"),
        unwritten: ["bin/csvcol"],
        writeback: { revision: "rev0001", reason: "turn t1" },
      },
      foldGoal(base),
    );
    expect(events.map((e) => e.type)).toEqual(["todo_completed", "goal_revision_recorded"]);
  });
  it("the other rules come first: a failed run is refused as not evidence, whatever it changed", () => {
    g()
      .when({
        type: "complete_todo",
        todoId: "todo_parse",
        receipt: receipt("todo_parse", { status: "ESCALATED" }),
        unwritten: ["bin/csvcol"],
      })
      .thenError(/rule done_needs_receipt: .*ended ESCALATED/);
  });
});

describe("a deferred gate whose condition has come true is asked again", () => {
  const due = deferGate({ kind: "todo_status", todo_id: "todo_parse", status: "done" });
  it("before its condition holds it is not asked; once it holds it is pending again, status still deferred", () => {
    const waiting = foldGoal([...base, due]);
    expect(pendingGates(waiting, ctx.now)).toEqual([]);
    const now = foldGoal([...base, due, completed("todo_parse")]);
    expect(now.todos.todo_publish?.status).toBe("deferred");
    expect(pendingGates(now, ctx.now)).toEqual([
      {
        gateId: "todo_publish",
        scope: "publish",
        content: "decide publish",
        covers: ["todo_release"],
        askedAgain: true,
      },
    ]);
  });
  it("the goal does not wait with no next action: operator_gate, and the person is told what to decide", () => {
    const st = foldGoal([...base, due, completed("todo_parse")]);
    const c = encodeContract(interactionContract(st, ctx));
    expect(c.runtime_state).toBe("operator_gate");
    expect(c.scheduler_hint.action).toBe("ask_user");
    expect(c.user_channel.gates.map((x) => [x.gate_id, x.asked_again])).toEqual([["todo_publish", true]]);
    expect(c.next_cli_actions[0]?.argv).toEqual(["loopgate", "gate", "approve", GOAL, "todo_publish"]);
  });
  it("a time condition: not asked before the time, asked from it on", () => {
    const at = deferGate({ kind: "at", at: "2026-12-02T00:00:00.000Z" });
    const st = foldGoal([...base, at, completed("todo_parse")]);
    expect(encodeContract(interactionContract(st, ctx)).scheduler_hint).toEqual({
      action: "wait_condition",
      not_before: "2026-12-02T00:00:00.000Z",
    });
    const later = { now: new Date("2026-12-02T00:00:00.000Z"), health: [] };
    expect(encodeContract(interactionContract(st, later)).runtime_state).toBe("operator_gate");
  });
  it("a deferred gate may be approved, or deferred anew (reopened and deferred in one append)", () => {
    g([due])
      .when({ type: "decide_gate", todoId: "todo_publish", decision: "approve" })
      .thenEvents([approved("todo_publish")]);
    const again = { kind: "at", at: "2027-01-01T00:00:00.000Z" } as const;
    g([due, completed("todo_parse")])
      .when({ type: "defer_gate", todoId: "todo_publish", resumeWhen: again, note: "next year" })
      .thenEvents([
        { type: "todo_reopened", data: { todo_id: "todo_publish", note: "deferred again" } },
        { type: "todo_deferred", data: { todo_id: "todo_publish", resume_when: again, note: "next year" } },
      ]);
    // A deferred todo that is not a gate is reopened explicitly, never deferred over.
    g([{ type: "todo_deferred", data: { todo_id: "todo_parse", resume_when: again, note: "" } }])
      .when({ type: "defer_todo", todoId: "todo_parse", resumeWhen: again })
      .thenError(/only an open todo can be deferred/);
  });
});

describe("rule scope_needs_gate: a required scope no user_gate decides is refused", () => {
  it("add_todo and supersede_todo refuse it, naming the rule and the declared scopes", () => {
    const nope = adv("todo_nope", { required_decision_scopes: ["legal"] });
    g()
      .when({ type: "add_todo", todo: nope })
      .thenError(
        /add_todo: rule scope_needs_gate: todo_nope requires the decision scope legal.*declared scopes: publish/,
      );
    g()
      .when({ type: "supersede_todo", todoId: "todo_parse", successor: nope })
      .thenError(/supersede_todo: rule scope_needs_gate/);
    g()
      .when({ type: "add_todo", todo: adv("todo_okay", { required_decision_scopes: ["publish"] }) })
      .thenEvents([
        {
          type: "todo_added",
          data: { todo: adv("todo_okay", { required_decision_scopes: ["publish"] }), successor_of: null },
        },
      ]);
  });
  it("a goal-wide gate's label is not a scope it decides (the todo would wait forever)", () => {
    const wide = created(spec([gate("todo_all", "everything", { global_gate: true })]));
    given(goalDecider, wide)
      .when({ type: "add_todo", todo: adv("todo_x_y", { required_decision_scopes: ["everything"] }) })
      .thenError(/rule scope_needs_gate/);
  });
});

describe("todo run: which runs a person may start (gates guard the effect)", () => {
  const st = (extra: GoalEventBody[] = [], s = base) => foldGoal([...s, ...extra]);
  it("work no gate covers runs while a gate waits; the work it covers is refused, naming the gate", () => {
    expect(runRefusal(st(), "todo_parse", ctx)).toBeNull();
    const r = runRefusal(st(), "todo_release", ctx);
    expect(r?.rule).toBe("decision_scope");
    expect(r?.message).toMatch(
      /rule decision_scope: todo_release .*scope publish: gate todo_publish waits on a person; nothing was run/,
    );
    expect(r?.next).toBe(`gate approve ${GOAL} todo_publish`);
    expect(runRefusal(st([approved("todo_publish")]), "todo_release", ctx)).toBeNull();
  });
  it("a deferred gate still holds its work, asked again or not", () => {
    const due = deferGate({ kind: "todo_status", todo_id: "todo_parse", status: "done" });
    expect(runRefusal(st([due]), "todo_release", ctx)?.message).toMatch(
      /is deferred until its condition holds/,
    );
    expect(runRefusal(st([due, completed("todo_parse")]), "todo_release", ctx)?.message).toMatch(
      /is deferred and asked again/,
    );
  });
  it("a goal-wide gate holds every todo", () => {
    const wide = created(spec([gate("todo_all", "go", { global_gate: true }), adv("todo_parse")]));
    expect(runRefusal(foldGoal(wide), "todo_parse", ctx)?.rule).toBe("decision_scope");
  });
  it("blocked_health, throttled and paused refuse, each named, in the runtime states' precedence", () => {
    const health = { now: ctx.now, health: [{ code: "workspace_dirty", detail: "stray.txt" }] };
    expect(runRefusal(st(), "todo_parse", health)?.message).toMatch(
      /^blocked_health: stray\.txt; nothing was run/,
    );
    const throttled = runRefusal(st(spent(10)), "todo_parse", ctx);
    expect(throttled?.rule).toBe("throttled");
    expect(throttled?.message).toMatch(
      /throttled: the goal's budget is spent \(turns_per_window\); nothing was run.*reopens at 2026-12-02T12:00:00.000Z/,
    );
    expect(runRefusal(st(spent(9)), "todo_parse", ctx)).toBeNull();
    const stopped: GoalEventBody = {
      type: "goal_activation_changed",
      data: { activation: "stopped", note: "" },
    };
    expect(runRefusal(st([stopped]), "todo_parse", ctx)?.rule).toBe("paused");
    // Several hold at once: the first by precedence is named.
    expect(runRefusal(st([stopped, ...spent(10)]), "todo_release", health)?.rule).toBe("blocked_health");
    expect(runRefusal(st([stopped, ...spent(10)]), "todo_release", ctx)?.rule).toBe("decision_scope");
    expect(runRefusal(st([stopped, ...spent(10)]), "todo_parse", ctx)?.rule).toBe("throttled");
  });
  it("a todo's own relations refuse it: a depends_on not yet done, a blocker whose handoff holds it back", () => {
    const deps = created(spec([adv("todo_parse"), adv("todo_docs", { depends_on: ["todo_parse"] })]));
    const waiting = runRefusal(foldGoal(deps), "todo_docs", ctx);
    expect(waiting?.rule).toBe("depends_on");
    expect(waiting?.message).toMatch(/todo_docs waits for todo_parse/);
    expect(runRefusal(foldGoal([...deps, completed("todo_parse")]), "todo_docs", ctx)).toBeNull();

    const blocker = { id: "todo_vendor", content: "the vendor fixes its API", class: "blocker" as const };
    const held = created(spec([adv("todo_parse"), { ...blocker, unblocks_todo_id: "todo_parse" }]));
    const r = runRefusal(foldGoal(held), "todo_parse", ctx);
    expect(r?.rule).toBe("handoff_blocking");
    expect(r?.message).toMatch(/held back by blocker todo_vendor/);
    const cleared: GoalEventBody = {
      type: "todo_closed_no_followup",
      data: { todo_id: "todo_vendor", rationale: "the vendor shipped the fix" },
    } as GoalEventBody;
    expect(runRefusal(foldGoal([...held, cleared]), "todo_parse", ctx)).toBeNull();
    // Nor is its evidence taken while the blocker holds: complete_todo names the same rule.
    const done = {
      type: "complete_todo",
      todoId: "todo_parse",
      receipt: receipt("todo_parse"),
      unwritten: [],
    };
    given(goalDecider, held)
      .when(done as never)
      .thenError(/rule handoff_blocking: todo_parse is held back by blocker todo_vendor/);
    given(goalDecider, [...held, cleared])
      .when(done as never)
      .thenEvents([completed("todo_parse")]);
  });
  it("focus_wait: while a replan is owed, a todo's task is not the owed work and is refused", () => {
    // A blocker cleared with no successor and no target owes a replan (handoff_without_successor).
    const blocker = { id: "todo_vendor", content: "the vendor fixes its API", class: "blocker" as const };
    const s = created(spec([adv("todo_parse"), blocker]));
    expect(runRefusal(foldGoal(s), "todo_parse", ctx)).toBeNull();
    const done: GoalEventBody = {
      type: "todo_attested",
      data: {
        todo_id: "todo_vendor",
        outcome: "done",
        note: "the vendor shipped it",
        evidence: [{ kind: "url", url: "https://example.com/vendor/changelog" }],
      },
    } as GoalEventBody;
    const r = runRefusal(foldGoal([...s, done]), "todo_parse", ctx);
    expect(r?.rule).toBe("focus_wait");
    expect(r?.message).toMatch(/todo_vendor was cleared without a successor/);
  });
  it("only an open advancement todo with a task runs", () => {
    const s = created(spec([adv("todo_parse"), monitor("todo_watch"), gate("todo_publish", "publish")]));
    expect(runRefusal(foldGoal(s), "todo_nothing", ctx)?.rule).toBe("no_such_todo");
    expect(runRefusal(foldGoal(s), "todo_watch", ctx)?.rule).toBe("run_needs_task");
    expect(runRefusal(foldGoal(s), "todo_publish", ctx)?.rule).toBe("run_needs_task");
    expect(runRefusal(foldGoal([...s, completed("todo_parse")]), "todo_parse", ctx)?.message).toMatch(
      /todo_parse is done: only an open todo is run/,
    );
  });
});
