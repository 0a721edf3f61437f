import { describe, expect, it } from "vitest";
import type { GoalEventBody, TodoSpec } from "../../../src/core/events/goal/goal-events.js";
import { interactionContract } from "../../../src/core/goal/contract.js";
import { encodeContract } from "../../../src/core/goal/contract-wire.js";
import { goalDecider } from "../../../src/core/goal/goal-decider.js";
import { foldGoal } from "../../../src/core/goal/goal-state.js";
import {
  monitorDueTimes,
  monitorOperation,
  monitorPollCommand,
} from "../../../src/core/goal/monitor-goal.js";
import { obligations } from "../../../src/core/goal/obligations.js";
import { contractView, nextWakeUp } from "../../../src/core/goal/schedule/scheduler.js";
import { given } from "../../support/decider.js";
import { adv, created, spec } from "./goal-fixtures.js";

// The continuous monitor in the goal stream, given/when/then over goal events.

const T0 = "2026-12-01T10:00:00.000Z";
const T0h = "2026-12-01T10:00:30.000Z";
const T1 = "2026-12-01T10:01:00.000Z";
const T2 = "2026-12-01T10:02:00.000Z";
const T3 = "2026-12-01T10:03:00.000Z";
const EXP = "2026-12-01T11:00:00.000Z";
const W = "todo_watch";
const watch = (extra: Partial<NonNullable<TodoSpec["monitor"]>> = {}): TodoSpec => ({
  id: W,
  content: "watch upstream reports",
  class: "continuous_monitor",
  monitor: {
    argv: ["cat", "reports.txt"],
    cadence_seconds: 60,
    timeout_seconds: 10,
    expires_at: EXP,
    max_no_change_before_replan: 2,
    ...extra,
  },
});
const SUCC: TodoSpec = { id: "todo_react", content: "adapt to the new report", class: "user_action" };
const goalWith = (m: TodoSpec = watch()) => created(spec([adv("todo_main"), m]));
const g = (events: GoalEventBody[]) => given(goalDecider, events);
const op = (operation_id: string, at: string) => ({ todo_id: W, operation_id, at });
const baseline: GoalEventBody = {
  type: "monitor_baseline_recorded",
  data: { ...op("op1", T0), result_hash: "h1", next_due_at: T1 },
};
const change = (
  operation_id: string,
  at: string,
  hash: string,
  generation: number,
  next: string,
  succ = SUCC,
) =>
  [
    {
      type: "monitor_observation_recorded",
      data: { ...op(operation_id, at), result_hash: hash, generation, next_due_at: next },
    },
    { type: "todo_added", data: { todo: succ, successor_of: W } },
    {
      type: "monitor_successor_created",
      data: { ...op(operation_id, at), generation, successor: { todo_id: succ.id, content: succ.content } },
    },
  ] satisfies GoalEventBody[];
const poll = (operation_id: string, now: string, result_hash: string, more = {}) => ({
  type: "record_monitor_poll" as const,
  todoId: W,
  operationId: operation_id,
  now: new Date(now),
  resultHash: result_hash,
  ...more,
});

describe("monitors in the goal stream", () => {
  it("a continuous_monitor todo is armed when added: due at once, never the selected work", () => {
    const c = encodeContract(interactionContract(foldGoal(goalWith()), { now: new Date(T0), health: [] }));
    expect(c.monitors).toEqual([
      { todo_id: W, action: "poll", next_due_at: null, consecutive_no_change: 0, generation: 0, stop: null },
    ]);
    expect(c.agent_channel.selected_todo).toBe("todo_main");
  });
  it("the first poll records the baseline", () => {
    g(goalWith())
      .when(poll("op1", T0, "h1"))
      .thenEvents([baseline]);
  });
  it("before next_due_at: a quiet no-op (nothing decided); the contract shows next_due_at and selects nothing for it", () => {
    g([...goalWith(), baseline])
      .when(poll("op2", T0h, "h2", { generation: 1, successor: SUCC }))
      .thenEvents([]);
    const blocked: GoalEventBody = {
      type: "todo_blocked",
      data: { todo_id: "todo_main", reason: "upstream" },
    };
    const c = encodeContract(
      interactionContract(foldGoal([...goalWith(), blocked, baseline]), {
        now: new Date(T0h),
        health: [],
      }),
    );
    expect(c.agent_channel.selected_todo).toBeNull();
    expect(c.agent_channel.must_attempt).toBe(false);
    expect(c.runtime_state).toBe("waiting");
    expect(c.monitors[0]).toMatchObject({ action: "quiet_noop", next_due_at: T1 });
    expect(c.scheduler_hint).toEqual({ action: "wait_condition", not_before: T1 });
  });
  it("due and the same hash: a no-change receipt; at max_no_change_before_replan a replan obligation", () => {
    const nc = (id: string, at: string, n: number, next: string, replan: boolean): GoalEventBody => ({
      type: "monitor_no_change_recorded",
      data: {
        ...op(id, at),
        result_hash: "h1",
        consecutive_no_change: n,
        next_due_at: next,
        replan_requested: replan,
      },
    });
    g([...goalWith(), baseline])
      .when(poll("op2", T1, "h1"))
      .thenEvents([nc("op2", T1, 1, T2, false)]);
    const after = [...goalWith(), baseline, nc("op2", T1, 1, T2, false)];
    g(after)
      .when(poll("op3", T2, "h1"))
      .thenEvents([nc("op3", T2, 2, T3, true)]);
    const st = foldGoal([...after, nc("op3", T2, 2, T3, true)]);
    expect(obligations(st).map((o) => o.kind)).toEqual(["monitor_replan"]);
  });
  it("a material change: the observation and the successor todo (a real todo_added) in one batch", () => {
    g([...goalWith(), baseline])
      .when(poll("op2", T1, "h2", { generation: 1, successor: SUCC }))
      .thenEvents(change("op2", T1, "h2", 1, T2));
    const st = foldGoal([...goalWith(), baseline, ...change("op2", T1, "h2", 1, T2)]);
    expect(st.todos.todo_react?.successorOf).toBe(W);
    expect(st.todos[W]?.successors).toEqual(["todo_react"]);
    expect(st.anomalies).toEqual([]);
  });
  it("a retry of the same operation id replays: nothing new, and readback finds the receipt", () => {
    const ev = [...goalWith(), baseline, ...change("op2", T1, "h2", 1, T2)];
    g(ev)
      .when(poll("op2", T1, "h2", { generation: 1, successor: SUCC }))
      .thenEvents([]);
    expect(monitorOperation(foldGoal(ev), "op2")?.events.map((e) => e.type)).toEqual([
      "monitor_observation_recorded",
      "monitor_successor_created",
    ]);
    expect(monitorOperation(foldGoal(ev), "op_never")).toBeNull();
  });
  it("must reject: a second successor for one generation (a new operation id reusing generation 1)", () => {
    const ev = [...goalWith(), baseline, ...change("op2", T1, "h2", 1, T2)];
    const other = { ...SUCC, id: "todo_react_again" };
    g(ev)
      .when(poll("op3", T2, "h3", { generation: 1, successor: other }))
      .thenError(/generation_not_advanced/);
  });
  it("must reject: the same evidence twice creates no new work (the changed hash again is a no-change)", () => {
    const ev = [...goalWith(), baseline, ...change("op2", T1, "h2", 1, T2)];
    const [e] = g(ev)
      .when(poll("op3", T2, "h2"))
      .events();
    expect(e?.type).toBe("monitor_no_change_recorded");
  });
  it("must reject: a forged log cannot link a second successor to a generation (the fold refuses it)", () => {
    const ev = [...goalWith(), baseline, ...change("op2", T1, "h2", 1, T2)];
    const forged = change("op3", T2, "h3", 1, T3, { ...SUCC, id: "todo_forged" });
    const st = foldGoal([...ev, ...forged]);
    expect(st.monitors[W]?.successors).toEqual({ 1: "todo_react" });
    expect(st.anomalies.length).toBe(2);
  });
  it("must reject: a material change without a successor or generation", () => {
    g([...goalWith(), baseline])
      .when(poll("op2", T1, "h2"))
      .thenError(/generation_not_advanced/);
    g([...goalWith(), baseline])
      .when(poll("op2", T1, "h2", { generation: 1 }))
      .thenError(/successor_missing/);
  });
  it("a poll failure is typed: no hash, no change, the next poll after the cadence", () => {
    g([...goalWith(), baseline])
      .when({
        type: "record_monitor_poll_failure",
        todoId: W,
        operationId: "op2",
        now: new Date(T1),
        failure: "timeout",
        exitCode: null,
        detail: "timed out after 10s",
      })
      .thenEvents([
        {
          type: "monitor_poll_failed",
          data: {
            ...op("op2", T1),
            failure: "timeout",
            exit_code: null,
            detail: "timed out after 10s",
            next_due_at: T2,
            consecutive_failures: 1,
          },
        },
      ]);
  });
  it("expiry: a poll is refused; the monitor completes with no_followup (the todo is done) or a successor", () => {
    const ev = [...goalWith(), baseline];
    g(ev)
      .when(poll("op9", EXP, "h1"))
      .thenError(/monitor_stop/);
    expect(
      encodeContract(interactionContract(foldGoal(ev), { now: new Date(EXP), health: [] })).monitors[0]
        ?.action,
    ).toBe("complete");
    const done = g(ev)
      .when({
        type: "complete_monitor",
        todoId: W,
        operationId: "op9",
        now: new Date(EXP),
        reason: "expired",
        followup: { kind: "no_followup", rationale: "the reporting window closed" },
      })
      .state();
    expect(done.todos[W]).toMatchObject({
      status: "done",
      noFollowup: { rationale: "the reporting window closed" },
    });
    g(ev)
      .when({
        type: "complete_monitor",
        todoId: W,
        operationId: "op9",
        now: new Date(EXP),
        reason: "expired",
        followup: { kind: "successor", successor: SUCC },
      })
      .thenEvents([
        { type: "todo_added", data: { todo: SUCC, successor_of: W } },
        {
          type: "monitor_completed",
          data: {
            ...op("op9", EXP),
            reason: "expired",
            followup: { kind: "successor", successor: { todo_id: SUCC.id, content: SUCC.content } },
          },
        },
      ]);
  });
  it("must reject: completing with an empty no_followup rationale, or polling a completed monitor", () => {
    const ev = [...goalWith(), baseline];
    const complete = (rationale: string, id = "op9") => ({
      type: "complete_monitor" as const,
      todoId: W,
      operationId: id,
      now: new Date(T1),
      reason: "stop",
      followup: { kind: "no_followup" as const, rationale },
    });
    g(ev)
      .when(complete(" "))
      .thenError(/rationale/);
    const [e] = g(ev).when(complete("enough")).events();
    g([...ev, e as GoalEventBody])
      .when(poll("op10", T2, "h1"))
      .thenError(/completed/);
  });
  it("resume_when is a stop condition: once it holds the monitor must be completed", () => {
    const m = watch({ resume_when: { kind: "todo_status", todo_id: "todo_main", status: "done" } });
    const ev = [...goalWith(m), baseline];
    expect(
      g(ev)
        .when(poll("op2", T1, "h1"))
        .events(),
    ).toHaveLength(1);
    const closed: GoalEventBody = {
      type: "todo_closed_no_followup",
      data: { todo_id: "todo_main", rationale: "x" },
    };
    g([...ev, closed])
      .when(poll("op2", T1, "h1"))
      .thenError(/resume_when holds/);
  });
  it("must reject: one operation id for two monitors", () => {
    const two = created(spec([watch(), { ...watch(), id: "todo_watch_b" }]));
    g([...two, baseline])
      .when({ ...poll("op1", T0, "h9"), todoId: "todo_watch_b" })
      .thenError(/operation_once/);
  });
  it("monitorPollCommand: baseline, no-change and a change opening the next generation with a successor", () => {
    const st0 = foldGoal(goalWith());
    expect(monitorPollCommand(st0, W, "op1", new Date(T0), { ok: true, result_hash: "h1" })).toEqual(
      poll("op1", T0, "h1"),
    );
    const st1 = foldGoal([...goalWith(), baseline]);
    expect(monitorPollCommand(st1, W, "op2", new Date(T1), { ok: true, result_hash: "h1" })).toEqual(
      poll("op2", T1, "h1"),
    );
    const cmd = monitorPollCommand(st1, W, "op2", new Date(T1), { ok: true, result_hash: "h2" });
    expect(cmd).toMatchObject({ generation: 1, successor: { id: "todo_watch_g1", class: "user_action" } });
    expect(goalDecider.decide(cmd, st1).map((e) => e.type)).toEqual([
      "monitor_observation_recorded",
      "todo_added",
      "monitor_successor_created",
    ]);
  });
});

describe("monitor replan requests", () => {
  it("asks again only after another max_no_change_before_replan unchanged polls; a replan_noop does not answer", () => {
    let events: GoalEventBody[] = [...goalWith(), baseline];
    const asked: boolean[] = [];
    for (let i = 1; i <= 5; i++) {
      const now = new Date(Date.parse(T0) + i * 60_000).toISOString();
      const [e] = goalDecider.decide(poll(`op_nc${i}`, now, "h1"), foldGoal(events));
      if (e?.type !== "monitor_no_change_recorded") throw new Error(`expected a no-change, got ${e?.type}`);
      asked.push(e.data.replan_requested);
      events = [...events, e];
    }
    expect(asked).toEqual([false, true, false, true, false]);
    const noop: GoalEventBody = {
      type: "replan_noop_recorded",
      data: { agent_id: "agent_main", obligation: `monitor_replan:${W}`, reason: "nothing" },
    };
    expect(obligations(foldGoal([...events, noop])).map((o) => o.kind)).toEqual(["monitor_replan"]);
    const answered: GoalEventBody = { type: "todo_added", data: { todo: SUCC, successor_of: W } };
    expect(obligations(foldGoal([...events, answered])).map((o) => o.kind)).toEqual([]);
  });
});

describe("monitor wake-ups", () => {
  it("a blocked monitor is not listed (not polled) and its poll is refused", () => {
    const blockedW: GoalEventBody = { type: "todo_blocked", data: { todo_id: W, reason: "feed offline" } };
    const ev = [...goalWith(), baseline, blockedW];
    expect(
      encodeContract(interactionContract(foldGoal(ev), { now: new Date(T1), health: [] })).monitors,
    ).toEqual([]);
    g(ev)
      .when(poll("op2", T1, "h1"))
      .thenError(/only an open monitor is polled/);
  });
  it("monitorDueTimes: now for a due or stopping monitor, next_due_at for a quiet one; nextWakeUp waits for it", () => {
    const blocked: GoalEventBody = {
      type: "todo_blocked",
      data: { todo_id: "todo_main", reason: "upstream" },
    };
    const st = foldGoal([...goalWith(), blocked, baseline]);
    const quiet = interactionContract(st, { now: new Date(T0h), health: [] });
    expect(monitorDueTimes(quiet.monitors, new Date(T0h))).toEqual([T1]);
    expect(
      nextWakeUp(contractView(quiet), { now: new Date(T0h), monitorDue: [T1], backoff: null }),
    ).toMatchObject({
      action: "wait_until",
      at: T1,
    });
    const due = interactionContract(st, { now: new Date(T2), health: [] });
    expect(monitorDueTimes(due.monitors, new Date(T2))).toEqual([T2]);
    expect(
      monitorDueTimes(interactionContract(st, { now: new Date(EXP), health: [] }).monitors, new Date(EXP)),
    ).toEqual([EXP]);
  });
});
