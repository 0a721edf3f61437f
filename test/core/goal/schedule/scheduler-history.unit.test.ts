import { describe, expect, it } from "vitest";
import { interactionContract } from "../../../../src/core/goal/contract.js";
import { foldGoal } from "../../../../src/core/goal/goal-state.js";
import {
  backoffOf,
  type StreamEvent,
  scheduleView,
  turnHistory,
} from "../../../../src/core/goal/schedule/backoff-history.js";
import { effectiveWake } from "../../../../src/core/goal/schedule/schedule-step.js";
import { adv, approved, created, gate, spec } from "../goal-fixtures.js";

// The backoff a host applies is derived from the turns recorded in the goal stream, never stored.

const P = { baseSeconds: 30, factor: 2, maxSeconds: 100 };
const T0 = "2026-12-01T10:00:00.000Z";
const NOW = "2026-12-01T11:00:00.000Z";
const goal = spec([
  adv("todo_aaa"),
  adv("todo_bbb", { required_decision_scopes: ["pub"] }),
  gate("todo_gate", "pub"),
]);

let rev = 0;
const ev = (e: { type: string; data: unknown }, origin = "runtime"): StreamEvent => ({
  ...e,
  revision: rev++,
  meta: { at: T0, origin },
});
const id = (t: string) => ({ goal_id: "goal_csv", agent_id: "agent_main", turn_instance_id: t });
const turn = (t: string, todo: string, end: "released" | "written" | "open" = "released"): StreamEvent[] => [
  ev({
    type: "turn_bound",
    data: { identity: id(t), work: { kind: "todo", todo_id: todo }, base_revision: "rev0000" },
  }),
  ...(end === "written"
    ? [
        ev({
          type: "turn_writeback_accepted",
          data: {
            identity: id(t),
            effect_ref: `x/${t}#durable_writeback`,
            commit: "c1",
            new_revision: "rev1",
          },
        }),
        ev({ type: "turn_scheduler_acked", data: { identity: id(t), effect_ref: "x", mode: "host_match" } }),
      ]
    : end === "released"
      ? [
          ev({
            type: "turn_released",
            data: { identity: id(t), reason: "the run was ESCALATED: no receipt" },
          }),
        ]
      : []),
];
const base = () => {
  rev = 0;
  return created(goal).map((e) => ev(e, "operator"));
};
const contractOf = (events: StreamEvent[]) =>
  interactionContract(foldGoal(events.filter((e) => !e.type.startsWith("turn_")) as never), {
    now: new Date(NOW),
    health: [],
  });

describe("backoff from the recorded turns", () => {
  it("two turns on the same todo that changed nothing: the second backs off one step (30s)", () => {
    const events = [...base(), ...turn("t1", "todo_aaa"), ...turn("t2", "todo_aaa")];
    const turns = turnHistory(events);
    expect(turns.map((t) => [t.turnInstanceId, t.changed])).toEqual([
      ["t1", false],
      ["t2", false],
    ]);
    expect(turns[0]?.identity).toBe(turns[1]?.identity);
    const sv = scheduleView(events, contractOf(events), P);
    expect(sv.backoff?.step).toBe(1);
    expect(
      effectiveWake({ action: "run_now", at: NOW, why: "work is selected" }, sv, new Date(NOW), P),
    ).toEqual({
      action: "wait_until",
      at: "2026-12-01T11:00:30.000Z",
      why: "no change for 1 turn(s) on the same contract; backoff 30s",
    });
  });

  it("four no-change turns grow 0, 30, 60, then stay at the bound 100", () => {
    const events = base();
    const steps: number[] = [];
    for (const t of ["t1", "t2", "t3", "t4", "t5"]) {
      events.push(...turn(t, "todo_aaa"));
      steps.push(backoffOf(turnHistory(events), P)?.step ?? -1);
    }
    expect(steps).toEqual([0, 1, 2, 3, 3]);
  });

  it("a turn whose writeback was accepted resets the backoff", () => {
    const events = [
      ...base(),
      ...turn("t1", "todo_aaa"),
      ...turn("t2", "todo_aaa"),
      ...turn("t3", "todo_aaa", "written"),
    ];
    expect(backoffOf(turnHistory(events), P)?.step).toBe(0);
  });

  it("a turn still in progress (bound, not settled) does not count", () => {
    const events = [...base(), ...turn("t1", "todo_aaa"), ...turn("t2", "todo_aaa", "open")];
    expect(turnHistory(events).map((t) => t.turnInstanceId)).toEqual(["t1"]);
  });

  it("a person's write after the turns (a new reset token) drops the backoff", () => {
    const events = [...base(), ...turn("t1", "todo_aaa"), ...turn("t2", "todo_aaa")];
    events.push(
      ev({ type: "goal_activation_changed", data: { activation: "active", note: "try again" } }, "operator"),
    );
    const sv = scheduleView(events, contractOf(events), P);
    expect(sv.backoff).toBeNull();
    expect(
      effectiveWake({ action: "run_now", at: NOW, why: "work is selected" }, sv, new Date(NOW), P).action,
    ).toBe("run_now");
  });

  it("a gate decided between two turns changes the identity: no growth across it", () => {
    const events = [...base(), ...turn("t1", "todo_aaa"), ...turn("t2", "todo_aaa")];
    events.push(ev(approved("todo_gate"), "runtime"));
    events.push(...turn("t3", "todo_aaa"));
    const turns = turnHistory(events);
    expect(turns[2]?.identity).not.toBe(turns[1]?.identity);
    expect(backoffOf(turns, P)?.step).toBe(0);
  });

  it("the backoff of another todo does not hold back the one selected now", () => {
    const events = [...base(), ...turn("t1", "todo_bbb"), ...turn("t2", "todo_bbb")];
    const sv = scheduleView(events, contractOf(events), P);
    expect(sv.backoff?.step).toBe(1);
    expect(sv.identity).not.toBe(sv.backoff?.identity);
    expect(
      effectiveWake({ action: "run_now", at: NOW, why: "work is selected" }, sv, new Date(NOW), P).action,
    ).toBe("run_now");
  });
});
