import { describe, expect, it } from "vitest";
import {
  type ContractView,
  contractIdentity,
  contractView,
  delaySeconds,
  nextBackoff,
  nextWakeUp,
} from "../../../../src/core/goal/schedule/scheduler.js";

const P = { base_seconds: 30, factor: 2, max_seconds: 100 };
const NOW = "2026-12-01T10:00:00.000Z";
const c = (over: Partial<ContractView> = {}): ContractView => ({
  runtime_state: "eligible",
  selected_todo: "todo_parse",
  gate_ids: [],
  not_before: null,
  terminal: false,
  ...over,
});

describe("scheduler: backoff", () => {
  it("grows 0, 30, 60, then stays at the bound 100 while the identity is unchanged after no-change turns", () => {
    const id = contractIdentity(c());
    let b = nextBackoff(null, { identity: id, changed: false, reset_token: null }, P);
    const delays = [delaySeconds(b.step, P)];
    for (let i = 0; i < 5; i++) {
      b = nextBackoff(b, { identity: id, changed: false, reset_token: null }, P);
      delays.push(delaySeconds(b.step, P));
    }
    expect(delays).toEqual([0, 30, 60, 100, 100, 100]);
  });
  it("resets on an identity change, a new reset_token, or a turn that changed something", () => {
    const id = contractIdentity(c());
    const grown = { identity: id, reset_token: null, step: 3 };
    expect(
      nextBackoff(
        grown,
        { identity: contractIdentity(c({ selected_todo: "todo_docs" })), changed: false, reset_token: null },
        P,
      ).step,
    ).toBe(0);
    expect(
      nextBackoff(
        grown,
        { identity: contractIdentity(c({ gate_ids: ["todo_publish"] })), changed: false, reset_token: null },
        P,
      ).step,
    ).toBe(0);
    expect(
      nextBackoff(
        grown,
        { identity: contractIdentity(c({ runtime_state: "waiting" })), changed: false, reset_token: null },
        P,
      ).step,
    ).toBe(0);
    expect(nextBackoff(grown, { identity: id, changed: false, reset_token: "r1" }, P).step).toBe(0);
    expect(nextBackoff(grown, { identity: id, changed: true, reset_token: null }, P).step).toBe(0);
  });
  it("the gate set is compared as a set", () => {
    expect(contractIdentity(c({ gate_ids: ["a", "b"] }))).toBe(contractIdentity(c({ gate_ids: ["b", "a"] })));
  });
});

describe("scheduler: next wake-up", () => {
  it("eligible with no backoff runs now; with backoff waits base·factor^(step-1)", () => {
    expect(nextWakeUp(c(), { now: NOW, monitor_due: [], backoff: null, policy: P })).toMatchObject({
      action: "run_now",
      at: NOW,
    });
    const b = { identity: contractIdentity(c()), reset_token: null, step: 2 };
    expect(nextWakeUp(c(), { now: NOW, monitor_due: [], backoff: b, policy: P })).toMatchObject({
      action: "wait_until",
      at: "2026-12-01T10:01:00.000Z",
    });
  });
  it("a backoff of another identity does not apply", () => {
    const b = { identity: contractIdentity(c({ selected_todo: "todo_docs" })), reset_token: null, step: 3 };
    expect(nextWakeUp(c(), { now: NOW, monitor_due: [], backoff: b, policy: P }).action).toBe("run_now");
  });
  it("waiting: the earliest future monitor next_due_at or resume time; a due monitor runs now", () => {
    const w = c({ runtime_state: "waiting", selected_todo: null, not_before: "2026-12-01T12:00:00.000Z" });
    expect(nextWakeUp(w, { now: NOW, monitor_due: ["2026-12-01T11:00:00.000Z"], backoff: null }).at).toBe(
      "2026-12-01T11:00:00.000Z",
    );
    expect(nextWakeUp(w, { now: NOW, monitor_due: [], backoff: null }).at).toBe("2026-12-01T12:00:00.000Z");
    expect(nextWakeUp(w, { now: NOW, monitor_due: ["2026-12-01T09:00:00.000Z"], backoff: null }).action).toBe(
      "run_now",
    );
    expect(
      nextWakeUp(c({ runtime_state: "waiting", selected_todo: null }), {
        now: NOW,
        monitor_due: [],
        backoff: null,
      }).action,
    ).toBe("wait_state_change");
  });
  it("throttled waits for the window; gate asks the user; terminal and paused stop; blocked repairs", () => {
    expect(
      nextWakeUp(c({ runtime_state: "throttled", not_before: "2026-12-02T00:00:00.000Z" }), {
        now: NOW,
        monitor_due: [],
        backoff: null,
      }),
    ).toMatchObject({ action: "wait_until", at: "2026-12-02T00:00:00.000Z" });
    expect(
      nextWakeUp(c({ runtime_state: "operator_gate" }), { now: NOW, monitor_due: [], backoff: null }).action,
    ).toBe("ask_user");
    expect(
      nextWakeUp(c({ terminal: true, runtime_state: "waiting" }), {
        now: NOW,
        monitor_due: [],
        backoff: null,
      }).action,
    ).toBe("stop");
  });
  it("never makes a paused or blocked goal runnable, even with a monitor due", () => {
    for (const runtime_state of ["paused", "blocked_health"] as const) {
      const w = nextWakeUp(c({ runtime_state }), {
        now: NOW,
        monitor_due: ["2026-12-01T09:00:00.000Z"],
        backoff: null,
      });
      expect(w.action).not.toBe("run_now");
      expect(w.at).toBeNull();
    }
  });
});

describe("scheduler: on goal-core's interaction contract", () => {
  it("contractView reads runtime state, selected todo, gate ids, not_before and terminal", () => {
    const contract = {
      runtime_state: "operator_gate",
      agent_channel: { selected_todo: "todo_docs" },
      user_channel: { gates: [{ gate_id: "todo_publish", scope: "publish", content: "", covers: [] }] },
      scheduler_hint: { action: "ask_user", not_before: null },
      terminal: false,
    } as unknown as Parameters<typeof contractView>[0];
    expect(contractView(contract)).toEqual({
      runtime_state: "operator_gate",
      selected_todo: "todo_docs",
      gate_ids: ["todo_publish"],
      not_before: null,
      terminal: false,
    });
  });
});
