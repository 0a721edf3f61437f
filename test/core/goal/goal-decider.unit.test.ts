import { describe, expect, it } from "vitest";
import type { GoalEventBody } from "../../../src/core/events/goal/goal-events.js";
import { completionRefusal } from "../../../src/core/goal/completion.js";
import { goalDecider } from "../../../src/core/goal/goal-decider.js";
import { DomainError } from "../../../src/core/kernel/errors.js";
import { given } from "../../support/decider.js";
import {
  adv,
  approved,
  completed,
  created,
  GOAL,
  gate,
  monitor,
  REV0,
  receipt,
  revision,
  spec,
} from "./goal-fixtures.js";

const base = created(
  spec([
    adv("todo_parse"),
    adv("todo_docs"),
    gate("todo_publish", "publish"),
    adv("todo_release", { required_decision_scopes: ["publish"] }),
    { id: "todo_key", content: "create the API key", class: "user_action" },
  ]),
);
const g = (extra: GoalEventBody[] = []) => given(goalDecider, [...base, ...extra]);
const deferred = (id: string, at = "2026-12-02T00:00:00.000Z"): GoalEventBody => ({
  type: "todo_deferred",
  data: { todo_id: id, resume_when: { kind: "at", at }, note: "" },
});
const blocked = (id: string): GoalEventBody => ({
  type: "todo_blocked",
  data: { todo_id: id, reason: "flaky CI" },
});

describe("goal: creation and activation", () => {
  it("create_goal emits goal_created and one todo_added per declared todo, in order", () => {
    const s = spec([adv("todo_parse"), gate("todo_publish", "publish")]);
    given(goalDecider, []).when({ type: "create_goal", goal: s }).thenEvents(created(s));
  });
  it("a second create_goal is refused", () => {
    g().when({ type: "create_goal", goal: spec() }).thenError(`goal ${GOAL} already exists`, DomainError);
  });
  it("a goal without acceptance is refused: an empty queue is never proof", () => {
    given(goalDecider, [])
      .when({ type: "create_goal", goal: spec([], { acceptance: [] }) })
      .thenError(/acceptance must list at least one/);
  });
  it("a goal file naming a todo twice, an unknown dependency or a gate without scope is refused", () => {
    const e = given(goalDecider, []);
    e.when({ type: "create_goal", goal: spec([adv("todo_one"), adv("todo_one")]) }).thenError(
      /todo todo_one appears twice/,
    );
    e.when({ type: "create_goal", goal: spec([adv("todo_one", { depends_on: ["todo_zzz"] })]) }).thenError(
      /depends on todo_zzz, which is not a todo/,
    );
    e.when({
      type: "create_goal",
      goal: spec([{ id: "todo_gate1", content: "x", class: "user_gate" }]),
    }).thenError(/needs a decision_scope/);
    e.when({
      type: "create_goal",
      goal: spec([{ id: "todo_one", content: "x", class: "advancement_task" }]),
    }).thenError(/needs a task/);
  });
  it("commands before the goal exists are refused", () => {
    given(goalDecider, [])
      .when({ type: "stop_goal" })
      .thenError(/does not exist yet/);
  });
  it("stop and resume toggle activation; a repeat is refused", () => {
    g()
      .when({ type: "stop_goal", note: "deploy" })
      .thenEvents([{ type: "goal_activation_changed", data: { activation: "stopped", note: "deploy" } }]);
    g()
      .when({ type: "resume_goal" })
      .thenError(/already active/);
    const stopped: GoalEventBody = {
      type: "goal_activation_changed",
      data: { activation: "stopped", note: "" },
    };
    g([stopped])
      .when({ type: "resume_goal" })
      .thenEvents([{ type: "goal_activation_changed", data: { activation: "active", note: "" } }]);
    g([stopped])
      .when({ type: "stop_goal" })
      .thenError(/already stopped/);
  });
  it("a revision is recorded only on top of the current one (needs_rebase otherwise)", () => {
    g()
      .when({ type: "record_revision", revision: "rev1", previous: REV0, reason: "commit" })
      .thenEvents(
        [revision(REV0, "rev1")].map((e) => ({
          ...e,
          data: { ...e.data, reason: "commit" },
        })) as GoalEventBody[],
      );
    g([revision(REV0, "rev1")])
      .when({ type: "record_revision", revision: "rev2", previous: REV0, reason: "stale" })
      .thenError(/needs_rebase: the goal workspace is at rev1, not rev0000/);
  });
});

describe("completionRefusal: the completion rules as a query, with no stand-in writeback", () => {
  const state = (extra: GoalEventBody[] = []) => g(extra).state();
  it("null when the decider would accept the completion", () => {
    expect(completionRefusal(state(), "todo_parse", receipt("todo_parse"))).toBeNull();
  });
  it("the decider's own reason when it would refuse, for each rule", () => {
    expect(completionRefusal(state(), "todo_parse", undefined)).toMatch(/done_needs_receipt: todo_parse/);
    expect(completionRefusal(state(), "todo_parse", receipt("todo_docs"))).toMatch(/receipt_matches_task/);
    expect(completionRefusal(state([revision(REV0, "rev1")]), "todo_parse", receipt("todo_parse"))).toMatch(
      /receipt_on_current_revision/,
    );
    expect(completionRefusal(state(), "todo_release", receipt("todo_release"))).toMatch(
      /decision_scope: todo_release needs scope publish \(pending\)/,
    );
    expect(completionRefusal(state(), "todo_nowhere", receipt("todo_parse"))).toMatch(/no todo todo_nowhere/);
  });
  it("says exactly what complete_todo throws", () => {
    const refused = completionRefusal(state(), "todo_parse", receipt("todo_docs"));
    g()
      .when({ type: "complete_todo", todoId: "todo_parse", receipt: receipt("todo_docs") })
      .thenError(refused ?? "expected a refusal");
  });
});

describe("todo: completion needs a validation receipt", () => {
  it("a SUCCESS of the todo's task on the current revision completes it", () => {
    g()
      .when({ type: "complete_todo", todoId: "todo_parse", receipt: receipt("todo_parse") })
      .thenEvents([completed("todo_parse")]);
  });
  it("operator done without evidence is refused", () => {
    g()
      .when({ type: "complete_todo", todoId: "todo_parse" })
      .thenError(/done_needs_receipt: todo_parse cannot be marked done without evidence/);
  });
  it("a receipt that is not SUCCESS is refused", () => {
    g()
      .when({
        type: "complete_todo",
        todoId: "todo_parse",
        receipt: receipt("todo_parse", { status: "ESCALATED" }),
      })
      .thenError(/ended ESCALATED, and only a SUCCESS/);
  });
  it("a receipt of another task is refused", () => {
    g()
      .when({ type: "complete_todo", todoId: "todo_parse", receipt: receipt("todo_docs") })
      .thenError(/receipt_matches_task/);
  });
  it("a receipt of another goal is refused", () => {
    g()
      .when({
        type: "complete_todo",
        todoId: "todo_parse",
        receipt: receipt("todo_parse", { goal_id: "other" }),
      })
      .thenError(/receipt_matches_goal/);
  });
  it("a receipt of an older revision is refused", () => {
    g([revision(REV0, "rev1")])
      .when({ type: "complete_todo", todoId: "todo_parse", receipt: receipt("todo_parse") })
      .thenError(
        /receipt_on_current_revision: run run_todo_parse ran on goal revision rev0000, but the goal workspace is now at rev1/,
      );
  });
  it("one run is the evidence of one todo only", () => {
    const twin = created(
      spec([
        adv("todo_one"),
        adv("todo_two", {
          task: { path: "tasks/todo_one.yaml", task_id: "todo_one", digest: "sha-todo_one" },
        }),
      ]),
    );
    given(goalDecider, [...twin, completed("todo_one")])
      .when({ type: "complete_todo", todoId: "todo_two", receipt: receipt("todo_one") })
      .thenError(/evidence_used_once: run run_todo_one is already the evidence of todo_one/);
  });
  it("a deferred or blocked todo cannot be completed (reopen first)", () => {
    g([deferred("todo_parse")])
      .when({ type: "complete_todo", todoId: "todo_parse", receipt: receipt("todo_parse") })
      .thenError(
        /open_to_done: only an open todo can be completed; todo_parse is deferred \(reopen it first\)/,
      );
    g([blocked("todo_parse")])
      .when({ type: "complete_todo", todoId: "todo_parse", receipt: receipt("todo_parse") })
      .thenError(/is blocked/);
  });
  it("a todo whose decision scope is not approved cannot be completed, even with a receipt", () => {
    g()
      .when({ type: "complete_todo", todoId: "todo_release", receipt: receipt("todo_release") })
      .thenError(/decision_scope: todo_release needs scope publish \(pending\)/);
    g([approved("todo_publish")])
      .when({ type: "complete_todo", todoId: "todo_release", receipt: receipt("todo_release") })
      .thenEvents([completed("todo_release")]);
  });
  it("a todo whose dependency is not done cannot be completed", () => {
    const dep = created(spec([adv("todo_one"), adv("todo_two", { depends_on: ["todo_one"] })]));
    given(goalDecider, dep)
      .when({ type: "complete_todo", todoId: "todo_two", receipt: receipt("todo_two") })
      .thenError(/depends_on: todo_two depends on todo_one/);
  });
  it("a user action or gate has no task: only a rationale or a decision closes it", () => {
    g()
      .when({ type: "complete_todo", todoId: "todo_key", receipt: receipt("todo_key") })
      .thenError(/has no task whose run could prove it/);
  });
  it("completion with a writeback records the new revision in the same append", () => {
    g()
      .when({
        type: "complete_todo",
        todoId: "todo_parse",
        receipt: receipt("todo_parse"),
        writeback: { revision: "rev1", reason: "accepted change", turnId: "turn_1" },
      })
      .thenEvents([
        completed("todo_parse"),
        {
          type: "goal_revision_recorded",
          data: { revision: "rev1", previous: REV0, reason: "accepted change", turn_id: "turn_1" },
        },
      ]);
  });
  it("an already done todo cannot be completed again", () => {
    g([completed("todo_parse")])
      .when({
        type: "complete_todo",
        todoId: "todo_parse",
        receipt: receipt("todo_parse", { run_id: "run_2" }),
      })
      .thenError(/todo_parse is done/);
  });
});

describe("todo: statuses, claims, defer, block, reopen", () => {
  it("a fifth status is refused, naming the four", () => {
    g()
      .when({ type: "set_todo_status", todoId: "todo_parse", status: "cancelled" })
      .thenError(
        /four_statuses: a todo status is exactly one of open \| done \| blocked \| deferred, not "cancelled"/,
      );
  });
  it("running is never stored, and a claim is not running", () => {
    g()
      .when({ type: "set_todo_status", todoId: "todo_parse", status: "running" })
      .thenError(/running_is_derived/);
    const claimed = g([{ type: "todo_claimed", data: { todo_id: "todo_parse", agent_id: "agent_main" } }]);
    expect(claimed.state().todos.todo_parse?.status).toBe("open");
    expect(claimed.state().todos.todo_parse?.claimedBy).toBe("agent_main");
  });
  it("set status done is refused: done only on evidence", () => {
    g()
      .when({ type: "set_todo_status", todoId: "todo_parse", status: "done" })
      .thenError(/done_needs_receipt/);
  });
  it("claim and release", () => {
    g()
      .when({ type: "claim_todo", todoId: "todo_parse", agentId: "agent_main" })
      .thenEvents([{ type: "todo_claimed", data: { todo_id: "todo_parse", agent_id: "agent_main" } }]);
    g()
      .when({ type: "release_todo", todoId: "todo_parse", agentId: "agent_main" })
      .thenError(/not claimed by agent_main/);
    g([completed("todo_parse")])
      .when({ type: "claim_todo", todoId: "todo_parse", agentId: "a" })
      .thenError(/only an open todo is claimed/);
  });
  it("defer needs a machine-readable resume_when", () => {
    g()
      .when({ type: "defer_todo", todoId: "todo_parse", resumeWhen: "when the user looks" })
      .thenError(/deferred_needs_resume_when/);
    g()
      .when({ type: "defer_todo", todoId: "todo_parse", resumeWhen: undefined })
      .thenError(/deferred_needs_resume_when/);
    g()
      .when({ type: "set_todo_status", todoId: "todo_parse", status: "deferred" })
      .thenError(/deferred_needs_resume_when/);
    g()
      .when({
        type: "defer_todo",
        todoId: "todo_parse",
        resumeWhen: { kind: "todo_status", todo_id: "todo_nope", status: "done" },
      })
      .thenError(/names todo_nope, which is not a todo/);
    g()
      .when({
        type: "defer_todo",
        todoId: "todo_parse",
        resumeWhen: { kind: "gate_decision", gate_id: "todo_docs", decision: "approved" },
      })
      .thenError(/not a user_gate/);
  });
  it("defer with a time, a todo status or a gate decision", () => {
    g()
      .when({
        type: "defer_todo",
        todoId: "todo_parse",
        resumeWhen: { kind: "at", at: "2026-12-02T00:00:00.000Z" },
      })
      .thenEvents([deferred("todo_parse")]);
    g()
      .when({
        type: "defer_todo",
        todoId: "todo_docs",
        resumeWhen: { kind: "gate_decision", gate_id: "todo_publish", decision: "any" },
        note: "after publish",
      })
      .thenEvents([
        {
          type: "todo_deferred",
          data: {
            todo_id: "todo_docs",
            resume_when: { kind: "gate_decision", gate_id: "todo_publish", decision: "any" },
            note: "after publish",
          },
        },
      ]);
  });
  it("a deferred todo does not reopen by itself when its condition holds; reopen is explicit", () => {
    const st = g([deferred("todo_parse", "2026-01-01T00:00:00.000Z")]).state();
    expect(st.todos.todo_parse?.status).toBe("deferred");
    g([deferred("todo_parse")])
      .when({ type: "reopen_todo", todoId: "todo_parse" })
      .thenEvents([{ type: "todo_reopened", data: { todo_id: "todo_parse", note: "" } }]);
    const reopened = g([
      deferred("todo_parse"),
      { type: "todo_reopened", data: { todo_id: "todo_parse", note: "" } },
    ]).state();
    expect(reopened.todos.todo_parse?.resumeWhen).toBeNull();
  });
  it("block needs an open todo and a reason; blocked reopens explicitly", () => {
    g()
      .when({ type: "block_todo", todoId: "todo_parse", reason: "flaky CI" })
      .thenEvents([blocked("todo_parse")]);
    g()
      .when({ type: "block_todo", todoId: "todo_parse", reason: " " })
      .thenError(/needs a reason/);
    g([blocked("todo_parse")])
      .when({ type: "set_todo_status", todoId: "todo_parse", status: "open" })
      .thenEvents([{ type: "todo_reopened", data: { todo_id: "todo_parse", note: "" } }]);
    g([deferred("todo_parse")])
      .when({ type: "block_todo", todoId: "todo_parse", reason: "x" })
      .thenError(/only an open todo can be blocked/);
  });
  it("done is terminal: reopen of a done todo is refused", () => {
    g([completed("todo_parse")])
      .when({ type: "reopen_todo", todoId: "todo_parse" })
      .thenError(/done is terminal/);
    g()
      .when({ type: "reopen_todo", todoId: "todo_parse" })
      .thenError(/already open/);
  });
  it("a bad todo id is refused with the pattern", () => {
    g()
      .when({ type: "block_todo", todoId: "Parse", reason: "x" })
      .thenError(/not a todo id \(todo_ followed by 3 to 64/);
    g()
      .when({ type: "block_todo", todoId: "todo_nothere", reason: "x" })
      .thenError(/no todo todo_nothere/);
  });
});

describe("todo: supersede, no_followup, delete", () => {
  const succ = adv("todo_parse_v2", { task: { path: "tasks/p2.yaml", task_id: "p2", digest: "sha-p2" } });
  const superseded: GoalEventBody[] = [
    { type: "todo_added", data: { todo: succ, successor_of: "todo_parse" } },
    {
      type: "todo_superseded",
      data: { todo_id: "todo_parse", successor_id: "todo_parse_v2", note: "superseded", reason: "split" },
    },
  ];
  it("supersede marks the predecessor done with note superseded and adds and links the successor in one append", () => {
    g()
      .when({ type: "supersede_todo", todoId: "todo_parse", successor: succ, reason: "split" })
      .thenEvents(superseded);
    const st = g(superseded).state();
    expect(st.todos.todo_parse).toMatchObject({
      status: "done",
      note: "superseded",
      supersededBy: "todo_parse_v2",
      successors: ["todo_parse_v2"],
    });
    expect(st.todos.todo_parse_v2).toMatchObject({ status: "open", successorOf: "todo_parse" });
  });
  it("a deferred todo may be superseded (its candidate path)", () => {
    g([deferred("todo_parse")])
      .when({ type: "supersede_todo", todoId: "todo_parse", successor: succ, reason: "split" })
      .thenEvents(superseded);
  });
  it("a done todo is not superseded (accepted work is compensated)", () => {
    g([completed("todo_parse")])
      .when({ type: "supersede_todo", todoId: "todo_parse", successor: succ })
      .thenError(/already done/);
  });
  it("deleting a superseded todo is refused; todos are never deleted", () => {
    g(superseded)
      .when({ type: "delete_todo", todoId: "todo_parse" })
      .thenError(/superseded_is_history: todo_parse was superseded by todo_parse_v2/);
    g()
      .when({ type: "delete_todo", todoId: "todo_docs" })
      .thenError(/todos_are_never_deleted/);
  });
  it("close with a no_followup rationale, from open, blocked or deferred; never without one", () => {
    const closed: GoalEventBody = {
      type: "todo_closed_no_followup",
      data: { todo_id: "todo_key", rationale: "key created by hand" },
    };
    g()
      .when({ type: "close_no_followup", todoId: "todo_key", rationale: "key created by hand" })
      .thenEvents([closed]);
    g([blocked("todo_parse")])
      .when({ type: "close_no_followup", todoId: "todo_parse", rationale: "obsolete" })
      .thenEvents([
        { type: "todo_closed_no_followup", data: { todo_id: "todo_parse", rationale: "obsolete" } },
      ]);
    g()
      .when({ type: "close_no_followup", todoId: "todo_key", rationale: "  " })
      .thenError(/no_followup_needs_rationale/);
    g([closed])
      .when({ type: "close_no_followup", todoId: "todo_key", rationale: "again" })
      .thenError(/already done/);
  });
  it("add_todo: a successor links to its predecessor; ids are never reused", () => {
    g()
      .when({ type: "add_todo", todo: adv("todo_more"), successorOf: "todo_parse" })
      .thenEvents([{ type: "todo_added", data: { todo: adv("todo_more"), successor_of: "todo_parse" } }]);
    g()
      .when({ type: "add_todo", todo: adv("todo_parse") })
      .thenError(/already exists \(ids are never reused\)/);
    g()
      .when({ type: "add_todo", todo: monitor("todo_watch") })
      .thenEvents([{ type: "todo_added", data: { todo: monitor("todo_watch"), successor_of: null } }]);
    g()
      .when({ type: "add_todo", todo: { id: "todo_watch", content: "x", class: "continuous_monitor" } })
      .thenError(/needs a monitor poll/);
  });
  it("add_todo: a required decision scope must be one a user_gate covers, as the goal file requires", () => {
    // "publish" is todo_publish's scope; "deploy" is no gate's, and would hold the todo back forever.
    g()
      .when({ type: "add_todo", todo: adv("todo_ship", { required_decision_scopes: ["publish"] }) })
      .thenEvents([
        {
          type: "todo_added",
          data: { todo: adv("todo_ship", { required_decision_scopes: ["publish"] }), successor_of: null },
        },
      ]);
    g()
      .when({ type: "add_todo", todo: adv("todo_ship", { required_decision_scopes: ["deploy"] }) })
      .thenError(
        /requires the decision scope deploy, which no user_gate of the goal covers; declared scopes: publish/,
      );
    // A gate added with the todo that needs it covers its scope.
    g()
      .when({ type: "add_todo", todo: gate("todo_deploy_gate", "deploy") })
      .thenEvents([
        { type: "todo_added", data: { todo: gate("todo_deploy_gate", "deploy"), successor_of: null } },
      ]);
  });
});

describe("gates: approve, reject, cancel, defer", () => {
  it("approve, reject and cancel decide the gate", () => {
    for (const [d, e] of [
      ["approve", "approved"],
      ["reject", "rejected"],
      ["cancel", "cancelled"],
    ] as const)
      g()
        .when({ type: "decide_gate", todoId: "todo_publish", decision: d, note: "n" })
        .thenEvents([{ type: "gate_decided", data: { todo_id: "todo_publish", decision: e, note: "n" } }]);
  });
  it("a decided gate is not decided again; a non-gate is not decided", () => {
    g([approved("todo_publish")])
      .when({ type: "decide_gate", todoId: "todo_publish", decision: "reject" })
      .thenError(/already approved/);
    g()
      .when({ type: "decide_gate", todoId: "todo_parse", decision: "approve" })
      .thenError(/not a user_gate/);
  });
  it("defer --until writes resume_when; a deferred gate can still be decided", () => {
    const cond = { kind: "at", at: "2026-12-03T00:00:00.000Z" } as const;
    g()
      .when({ type: "defer_gate", todoId: "todo_publish", resumeWhen: cond })
      .thenEvents([
        { type: "todo_deferred", data: { todo_id: "todo_publish", resume_when: cond, note: "" } },
      ]);
    g()
      .when({ type: "defer_gate", todoId: "todo_parse", resumeWhen: cond })
      .thenError(/not a user_gate/);
    g()
      .when({ type: "defer_gate", todoId: "todo_publish", resumeWhen: "later" })
      .thenError(/deferred_needs_resume_when/);
    g([deferred("todo_publish")])
      .when({ type: "decide_gate", todoId: "todo_publish", decision: "approve" })
      .thenEvents([
        { type: "gate_decided", data: { todo_id: "todo_publish", decision: "approved", note: "" } },
      ]);
  });
});

describe("acceptance, vision, spend, no_followup", () => {
  it("an acceptance receipt must be of the acceptance item's task", () => {
    const r = receipt("acceptance");
    g()
      .when({ type: "record_acceptance", acceptanceId: "acc_all", receipt: r })
      .thenEvents([{ type: "acceptance_receipt_recorded", data: { acceptance_id: "acc_all", receipt: r } }]);
    g()
      .when({ type: "record_acceptance", acceptanceId: "acc_all", receipt: receipt("todo_parse") })
      .thenError(/receipt_matches_task/);
    g()
      .when({ type: "record_acceptance", acceptanceId: "acc_x", receipt: r })
      .thenError(/not an acceptance item/);
  });
  it("vision: a bounded route with its checkpoint; patch or unchanged reason afterwards", () => {
    const cp = { goal_revision: REV0, acceptance_version: 0 };
    g()
      .when({ type: "record_vision", agentId: "agent_main", route: "parse, docs, publish" })
      .thenEvents([
        {
          type: "vision_recorded",
          data: { agent_id: "agent_main", route: "parse, docs, publish", checkpoint: cp },
        },
      ]);
    g()
      .when({ type: "record_vision", agentId: "agent_main", route: "x".repeat(4001) })
      .thenError(/vision_bounded: the route is 4001 characters; at most 4000/);
    g()
      .when({ type: "record_vision_unchanged", agentId: "agent_main", reason: "holds" })
      .thenError(/has no vision yet/);
    const v: GoalEventBody = {
      type: "vision_recorded",
      data: { agent_id: "agent_main", route: "r1", checkpoint: cp },
    };
    g([v])
      .when({ type: "patch_vision", agentId: "agent_main", patch: "-r1 +r2", route: "r2", reason: "scope" })
      .thenEvents([
        {
          type: "vision_patched",
          data: { agent_id: "agent_main", patch: "-r1 +r2", route: "r2", reason: "scope", checkpoint: cp },
        },
      ]);
    g([v])
      .when({ type: "patch_vision", agentId: "agent_main", patch: "noop", route: "r1", reason: "" })
      .thenError(/replan_noop/);
    g([v])
      .when({ type: "record_vision_unchanged", agentId: "agent_main", reason: "route holds" })
      .thenEvents([
        {
          type: "vision_unchanged_recorded",
          data: { agent_id: "agent_main", reason: "route holds", checkpoint: cp },
        },
      ]);
  });
  it("a turn is charged once", () => {
    const spend = {
      turn_id: "turn_1",
      at: "2026-12-01T10:00:00.000Z",
      turns: 1,
      tokens: 100,
      cost_usd: 0.01,
    };
    const command = {
      type: "record_spend",
      turnId: "turn_1",
      at: "2026-12-01T10:00:00.000Z",
      turns: 1,
      tokens: 100,
      costUsd: 0.01,
    } as const;
    g()
      .when(command)
      .thenEvents([{ type: "quota_spent", data: spend }]);
    g([{ type: "quota_spent", data: spend }])
      .when(command)
      .thenError(/spend_once/);
  });
  it("a no_followup intent needs a rationale; a todo added later voids it", () => {
    g()
      .when({ type: "declare_no_followup", rationale: "" })
      .thenError(/needs a rationale/);
    const decl: GoalEventBody = { type: "goal_no_followup_declared", data: { rationale: "done" } };
    expect(g([decl]).state().noFollowup?.rationale).toBe("done");
    expect(
      g([decl, { type: "todo_added", data: { todo: adv("todo_more"), successor_of: null } }]).state()
        .noFollowup,
    ).toBeNull();
  });
});

describe("the fold re-checks the rules: a forged log cannot close work", () => {
  it("a todo_completed with a non-matching receipt is not applied and becomes an anomaly", () => {
    const st = g([completed("todo_parse", { goal_revision: "other" })]).state();
    expect(st.todos.todo_parse?.status).toBe("open");
    expect(st.anomalies).toHaveLength(1);
    expect(st.anomalies[0]).toMatch(/receipt_on_current_revision/);
  });
  it("a todo_superseded without its successor added first is not applied", () => {
    const st = g([
      {
        type: "todo_superseded",
        data: { todo_id: "todo_parse", successor_id: "todo_new", note: "superseded", reason: "" },
      },
    ]).state();
    expect(st.todos.todo_parse?.status).toBe("open");
    expect(st.anomalies[0]).toMatch(/successor must be added/);
  });
});
