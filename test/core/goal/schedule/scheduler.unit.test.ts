import { describe, expect, it } from "vitest";
import {
  type ContractView,
  contractIdentity,
  contractView,
  delaySeconds,
  nextBackoff,
  nextWakeUp,
} from "../../../../src/core/goal/schedule/scheduler.js";

const P = { baseSeconds: 30, factor: 2, maxSeconds: 100 };
const NOW = "2026-12-01T10:00:00.000Z";
const c = (over: Partial<ContractView> = {}): ContractView => ({
  runtimeState: "eligible",
  selectedTodo: "todo_parse",
  gateIds: [],
  notBefore: null,
  terminal: false,
  ...over,
});

describe("scheduler: backoff", () => {
  it("grows 0, 30, 60, then stays at the bound 100 while the identity is unchanged after no-change turns", () => {
    const id = contractIdentity(c());
    let b = nextBackoff(null, { identity: id, changed: false, resetToken: null }, P);
    const delays = [delaySeconds(b.step, P)];
    for (let i = 0; i < 5; i++) {
      b = nextBackoff(b, { identity: id, changed: false, resetToken: null }, P);
      delays.push(delaySeconds(b.step, P));
    }
    expect(delays).toEqual([0, 30, 60, 100, 100, 100]);
  });
  it("resets on an identity change, a new resetToken, or a turn that changed something", () => {
    const id = contractIdentity(c());
    const grown = { identity: id, resetToken: null, step: 3 };
    expect(
      nextBackoff(
        grown,
        { identity: contractIdentity(c({ selectedTodo: "todo_docs" })), changed: false, resetToken: null },
        P,
      ).step,
    ).toBe(0);
    expect(
      nextBackoff(
        grown,
        { identity: contractIdentity(c({ gateIds: ["todo_publish"] })), changed: false, resetToken: null },
        P,
      ).step,
    ).toBe(0);
    expect(
      nextBackoff(
        grown,
        { identity: contractIdentity(c({ runtimeState: "waiting" })), changed: false, resetToken: null },
        P,
      ).step,
    ).toBe(0);
    expect(nextBackoff(grown, { identity: id, changed: false, resetToken: "r1" }, P).step).toBe(0);
    expect(nextBackoff(grown, { identity: id, changed: true, resetToken: null }, P).step).toBe(0);
  });
  it("the gate set is compared as a set", () => {
    expect(contractIdentity(c({ gateIds: ["a", "b"] }))).toBe(contractIdentity(c({ gateIds: ["b", "a"] })));
  });
});

describe("scheduler: next wake-up", () => {
  it("eligible with no backoff runs now; with backoff waits base·factor^(step-1)", () => {
    expect(nextWakeUp(c(), { now: new Date(NOW), monitorDue: [], backoff: null, policy: P })).toMatchObject({
      action: "run_now",
      at: NOW,
    });
    const b = { identity: contractIdentity(c()), resetToken: null, step: 2 };
    expect(nextWakeUp(c(), { now: new Date(NOW), monitorDue: [], backoff: b, policy: P })).toMatchObject({
      action: "wait_until",
      at: "2026-12-01T10:01:00.000Z",
    });
  });
  it("a backoff of another identity does not apply", () => {
    const b = { identity: contractIdentity(c({ selectedTodo: "todo_docs" })), resetToken: null, step: 3 };
    expect(nextWakeUp(c(), { now: new Date(NOW), monitorDue: [], backoff: b, policy: P }).action).toBe(
      "run_now",
    );
  });
  it("waiting: the earliest future monitor next_due_at or resume time; a due monitor runs now", () => {
    const w = c({ runtimeState: "waiting", selectedTodo: null, notBefore: "2026-12-01T12:00:00.000Z" });
    expect(
      nextWakeUp(w, { now: new Date(NOW), monitorDue: ["2026-12-01T11:00:00.000Z"], backoff: null }).at,
    ).toBe("2026-12-01T11:00:00.000Z");
    expect(nextWakeUp(w, { now: new Date(NOW), monitorDue: [], backoff: null }).at).toBe(
      "2026-12-01T12:00:00.000Z",
    );
    expect(
      nextWakeUp(w, { now: new Date(NOW), monitorDue: ["2026-12-01T09:00:00.000Z"], backoff: null }).action,
    ).toBe("run_now");
    expect(
      nextWakeUp(c({ runtimeState: "waiting", selectedTodo: null }), {
        now: new Date(NOW),
        monitorDue: [],
        backoff: null,
      }).action,
    ).toBe("wait_state_change");
  });
  it("throttled waits for the window; gate asks the user; terminal and paused stop; blocked repairs", () => {
    expect(
      nextWakeUp(c({ runtimeState: "throttled", notBefore: "2026-12-02T00:00:00.000Z" }), {
        now: new Date(NOW),
        monitorDue: [],
        backoff: null,
      }),
    ).toMatchObject({ action: "wait_until", at: "2026-12-02T00:00:00.000Z" });
    expect(
      nextWakeUp(c({ runtimeState: "operator_gate" }), {
        now: new Date(NOW),
        monitorDue: [],
        backoff: null,
      }).action,
    ).toBe("ask_user");
    expect(
      nextWakeUp(c({ terminal: true, runtimeState: "waiting" }), {
        now: new Date(NOW),
        monitorDue: [],
        backoff: null,
      }).action,
    ).toBe("stop");
  });
  it("never makes a paused or blocked goal runnable, even with a monitor due", () => {
    for (const runtime_state of ["paused", "blocked_health"] as const) {
      const w = nextWakeUp(c({ runtimeState: runtime_state }), {
        now: new Date(NOW),
        monitorDue: ["2026-12-01T09:00:00.000Z"],
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
      runtimeState: "operator_gate",
      agentChannel: { selectedTodo: "todo_docs" },
      userChannel: { gates: [{ gateId: "todo_publish", scope: "publish", content: "", covers: [] }] },
      schedulerHint: { action: "ask_user", notBefore: null },
      terminal: false,
    } as unknown as Parameters<typeof contractView>[0];
    expect(contractView(contract)).toEqual({
      runtimeState: "operator_gate",
      selectedTodo: "todo_docs",
      gateIds: ["todo_publish"],
      notBefore: null,
      terminal: false,
    });
  });
});

describe("scheduler: waiting on a person", () => {
  it("names a gate when one waits, else a person's step (a stopped monitor, a user action)", () => {
    const input = { now: new Date(NOW), monitorDue: [], backoff: null };
    const gate = nextWakeUp(c({ runtimeState: "operator_gate", gateIds: ["todo_publish_gate"] }), input);
    expect(gate).toEqual({ action: "ask_user", at: null, why: "a person must decide a gate" });
    const step = nextWakeUp(c({ runtimeState: "operator_gate", selectedTodo: null }), input);
    expect(step).toEqual({ action: "ask_user", at: null, why: "a person must act (goal next says what)" });
  });
});
