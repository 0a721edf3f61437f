import { describe, expect, it } from "vitest";
import type { GoalEventBody, TodoSpec } from "../../../src/core/events/goal/goal-events.js";
import { interactionContract } from "../../../src/core/goal/contract.js";
import { encodeContract } from "../../../src/core/goal/contract-wire.js";
import { type GoalCommand, goalDecider } from "../../../src/core/goal/goal-decider.js";
import { foldGoal } from "../../../src/core/goal/goal-state.js";
import { monitorSchedules, monitorsStoppedByFailures } from "../../../src/core/goal/monitor-goal.js";
import { given } from "../../support/decider.js";
import { created, gate, spec } from "./goal-fixtures.js";

// A monitor's failed polls are bounded: at max_failures in a row the same append blocks its todo, it is
// polled no more, and the goal asks a person (reopen once the poll is repaired, or close it) — never silent.

const W = "todo_watch";
const T0 = Date.parse("2026-12-01T10:00:00.000Z");
const at = (s: number) => new Date(T0 + s * 1000);
const watch: TodoSpec = {
  id: W,
  content: "watch upstream reports",
  class: "continuous_monitor",
  monitor: {
    argv: ["sh", "reports.sh"],
    cadence_seconds: 60,
    timeout_seconds: 10,
    max_no_change_before_replan: 5,
    backoff: { factor: 2, max_seconds: 600 },
    max_failures: 2,
  },
};
const goal = () => created(spec([watch]));
const fail = (n: number, s: number): GoalCommand => ({
  type: "record_monitor_poll_failure",
  todoId: W,
  operationId: `op${n}`,
  now: at(s),
  failure: "exit_nonzero",
  exitCode: 3,
  detail: "the poll exited 3",
});
/** Appends what each command decides, in order. */
function play(cmds: GoalCommand[], log: GoalEventBody[] = goal()): GoalEventBody[] {
  for (const c of cmds) log.push(...goalDecider.decide(c, foldGoal(log)));
  return log;
}

describe("a monitor's failed polls are bounded", () => {
  it("below the bound: a failure is recorded with its count and the backoff; the monitor stays open and due later", () => {
    given(goalDecider, goal())
      .when(fail(1, 0))
      .thenEvents([
        {
          type: "monitor_poll_failed",
          data: {
            todo_id: W,
            operation_id: "op1",
            at: at(0).toISOString(),
            failure: "exit_nonzero",
            exit_code: 3,
            detail: "the poll exited 3",
            // The first quiet poll is retried at the cadence.
            next_due_at: at(60).toISOString(),
            consecutive_failures: 1,
          },
        },
      ]);
  });

  it("at max_failures the same append blocks the monitor's todo, naming the rule and the last failure", () => {
    const log = play([fail(1, 0)]);
    const decided = given(goalDecider, log)
      .when(fail(2, 60))
      .thenEvents([
        {
          type: "monitor_poll_failed",
          data: {
            todo_id: W,
            operation_id: "op2",
            at: at(60).toISOString(),
            failure: "exit_nonzero",
            exit_code: 3,
            detail: "the poll exited 3",
            // The second quiet poll in a row: 60 s doubled.
            next_due_at: at(60 + 120).toISOString(),
            consecutive_failures: 2,
          },
        },
        {
          type: "todo_blocked",
          data: {
            todo_id: W,
            reason:
              "rule monitor_failures: 2 polls failed in a row (max_failures 2); the last: exit_nonzero: the poll exited 3",
          },
        },
      ]);
    const s = foldGoal([...log, ...decided]);
    expect(s.anomalies).toEqual([]);
    expect(s.todos[W]?.status).toBe("blocked");
    // Not polled any more (not listed, its poll refused), and not silent: a person's action in the contract.
    expect(monitorSchedules(s, at(10_000))).toEqual([]);
    expect(() => goalDecider.decide(fail(3, 10_000), s)).toThrow(/monitor todo_watch is blocked/);
    expect(monitorsStoppedByFailures(s).map((m) => m.todoId)).toEqual([W]);
    const c = encodeContract(interactionContract(s, { now: at(10_000), health: [] }));
    // It freezes nothing else: the goal's other work (here, proving acceptance) is still selected.
    expect(c.runtime_state).toBe("eligible");
    expect(c.user_channel.action_required).toBe(true);
    expect(c.user_channel.actions).toEqual([
      {
        todo_id: W,
        action: "monitor_stopped",
        detail: expect.stringMatching(/2 polls failed in a row.*reopen it/),
      },
    ]);
    expect(c.next_cli_actions.map((a) => a.argv)).toContainEqual(["loopgate", "todo", "reopen", s.goalId, W]);
  });

  it("a person's reopen: due at once, the count and backoff start again (one more failure does not stop it)", () => {
    const log = play([fail(1, 0), fail(2, 60)]);
    const reopened = play([{ type: "reopen_todo", todoId: W, note: "fixed the script" }], log);
    const s = foldGoal(reopened);
    expect(s.todos[W]?.status).toBe("open");
    expect(monitorSchedules(s, at(361))[0]).toMatchObject({ action: "poll", consecutiveFailures: 0 });
    const next = goalDecider.decide(fail(3, 361), s);
    expect(next.map((e) => e.type)).toEqual(["monitor_poll_failed"]);
    expect(next[0]).toMatchObject({
      data: { consecutive_failures: 1, next_due_at: at(361 + 60).toISOString() },
    });
  });

  it("a blocked monitor a person blocked themselves is a wait, not a stop by failures", () => {
    const log = [
      ...goal(),
      { type: "todo_blocked", data: { todo_id: W, reason: "paused by hand" } },
    ] as GoalEventBody[];
    const s = foldGoal(log);
    expect(monitorsStoppedByFailures(s)).toEqual([]);
    expect(interactionContract(s, { now: at(0), health: [] }).userChannel.actions).toEqual([]);
  });

  it("another open gate still asks too: the stop is one more action, in todo order", () => {
    const log = play([fail(1, 0), fail(2, 60)], created(spec([gate("todo_publish_gate", "publish"), watch])));
    const c = encodeContract(interactionContract(foldGoal(log), { now: at(400), health: [] }));
    expect(c.user_channel.gates.map((g) => g.gate_id)).toEqual(["todo_publish_gate"]);
    expect(c.user_channel.actions.map((a) => a.action)).toEqual(["monitor_stopped"]);
  });
});
