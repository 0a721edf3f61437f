import { describe, expect, it } from "vitest";
import {
  type MonitorEvent,
  monitorDecider,
  monitorPollAction,
  operationReceipt,
} from "../../../../src/core/goal/turn/monitor.js";
import { fold, given } from "../../../support/decider.js";

const T0 = "2026-12-01T10:00:00.000Z";
const T1 = "2026-12-01T10:01:00.000Z";
const T2 = "2026-12-01T10:02:00.000Z";
const T3 = "2026-12-01T10:03:00.000Z";
const policy = {
  cadenceSeconds: 60,
  expiresAt: "2026-12-01T11:00:00.000Z",
  maxNoChangeBeforeReplan: 2,
  // A fixed cadence and the default failure bound: the backoff rules have their own tests (monitor-backoff).
  backoffFactor: 1,
  backoffMaxSeconds: 60,
  maxFailures: 3,
};
const armed: MonitorEvent = {
  type: "monitor_armed",
  data: { todo_id: "todo_watch", policy, next_due_at: T0 },
};
const baseline: MonitorEvent = {
  type: "monitor_baseline_recorded",
  data: { todo_id: "todo_watch", operation_id: "op1", at: T0, result_hash: "h1", next_due_at: T1 },
};
const SUCC = { todo_id: "todo_fix_upstream", content: "adapt to the new upstream format" };
const g = (events: MonitorEvent[]) => given(monitorDecider, events);

describe("monitor: poll rules", () => {
  it("the first poll records the baseline", () => {
    g([armed])
      .when({ type: "record_poll", operationId: "op1", now: new Date(T0), resultHash: "h1" })
      .thenEvents([baseline]);
  });
  it("before next_due_at: a quiet no-op (no event)", () => {
    expect(
      monitorPollAction(fold(monitorDecider, [armed, baseline]), new Date("2026-12-01T10:00:30.000Z")),
    ).toBe("quiet_noop");
    g([armed, baseline])
      .when({
        type: "record_poll",
        operationId: "op2",
        now: new Date("2026-12-01T10:00:30.000Z"),
        resultHash: "h2",
        generation: 1,
        successor: SUCC,
      })
      .thenEvents([]);
  });
  it("due and the same hash: a no-change receipt, consecutive_no_change + 1; at the bound it asks for a replan", () => {
    const nc1: MonitorEvent = {
      type: "monitor_no_change_recorded",
      data: {
        todo_id: "todo_watch",
        operation_id: "op2",
        at: T1,
        result_hash: "h1",
        consecutive_no_change: 1,
        next_due_at: T2,
        replan_requested: false,
      },
    };
    g([armed, baseline])
      .when({ type: "record_poll", operationId: "op2", now: new Date(T1), resultHash: "h1" })
      .thenEvents([nc1]);
    g([armed, baseline, nc1])
      .when({ type: "record_poll", operationId: "op3", now: new Date(T2), resultHash: "h1" })
      .thenEvents([
        {
          type: "monitor_no_change_recorded",
          data: {
            todo_id: "todo_watch",
            operation_id: "op3",
            at: T2,
            result_hash: "h1",
            consecutive_no_change: 2,
            next_due_at: T3,
            replan_requested: true,
          },
        },
      ]);
  });
  it("material change: observation and successor in one batch under one operation id", () => {
    const ev = g([armed, baseline])
      .when({
        type: "record_poll",
        operationId: "op2",
        now: new Date(T1),
        resultHash: "h2",
        generation: 1,
        successor: SUCC,
      })
      .thenEvents([
        {
          type: "monitor_observation_recorded",
          data: {
            todo_id: "todo_watch",
            operation_id: "op2",
            at: T1,
            result_hash: "h2",
            generation: 1,
            next_due_at: T2,
          },
        },
        {
          type: "monitor_successor_created",
          data: { todo_id: "todo_watch", operation_id: "op2", at: T1, generation: 1, successor: SUCC },
        },
      ]);
    const s = fold(monitorDecider, [armed, baseline, ...ev]);
    expect(s.consecutiveNoChange).toBe(0);
    expect(operationReceipt(s, "op2")).toEqual(ev);
    // a retry of the same operation replays: nothing new, not a second successor
    given(monitorDecider, [armed, baseline, ...ev])
      .when({
        type: "record_poll",
        operationId: "op2",
        now: new Date(T1),
        resultHash: "h2",
        generation: 1,
        successor: SUCC,
      })
      .thenEvents([]);
    // the same generation under a new operation id is refused
    given(monitorDecider, [armed, baseline, ...ev])
      .when({
        type: "record_poll",
        operationId: "op3",
        now: new Date(T2),
        resultHash: "h3",
        generation: 1,
        successor: SUCC,
      })
      .thenError(/generation_not_advanced/);
  });
  it("a material change must advance the generation and name its successor", () => {
    g([armed, baseline])
      .when({ type: "record_poll", operationId: "op2", now: new Date(T1), resultHash: "h2", successor: SUCC })
      .thenError(/generation_not_advanced/);
    g([armed, baseline])
      .when({
        type: "record_poll",
        operationId: "op2",
        now: new Date(T1),
        resultHash: "h2",
        generation: 2,
        successor: SUCC,
      })
      .thenError(/generation_not_advanced/);
    g([armed, baseline])
      .when({ type: "record_poll", operationId: "op2", now: new Date(T1), resultHash: "h2", generation: 1 })
      .thenError(/successor_missing/);
  });
  it("expiry: a poll is refused, the monitor completes with a successor or no_followup", () => {
    const late = "2026-12-01T11:00:00.000Z";
    expect(monitorPollAction(fold(monitorDecider, [armed, baseline]), new Date(late))).toBe("complete");
    g([armed, baseline])
      .when({ type: "record_poll", operationId: "op2", now: new Date(late), resultHash: "h1" })
      .thenError(/expired/);
    const done: MonitorEvent = {
      type: "monitor_completed",
      data: {
        todo_id: "todo_watch",
        operation_id: "op9",
        at: late,
        reason: "expired",
        followup: { kind: "no_followup", rationale: "upstream is stable" },
      },
    };
    g([armed, baseline])
      .when({
        type: "complete",
        operationId: "op9",
        now: new Date(late),
        reason: "expired",
        followup: { kind: "no_followup", rationale: "upstream is stable" },
      })
      .thenEvents([done]);
    g([armed, baseline])
      .when({
        type: "complete",
        operationId: "op9",
        now: new Date(late),
        reason: "expired",
        followup: { kind: "no_followup", rationale: " " },
      })
      .thenError(/rationale/);
    g([armed, baseline, done])
      .when({ type: "record_poll", operationId: "op10", now: new Date(late), resultHash: "h1" })
      .thenError(/completed/);
  });
  it("an unarmed monitor refuses polls", () => {
    g([])
      .when({ type: "record_poll", operationId: "op1", now: new Date(T0), resultHash: "h1" })
      .thenError(/not_armed/);
  });
});
