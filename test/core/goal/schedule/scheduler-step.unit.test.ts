import { describe, expect, it } from "vitest";
import type { ScheduleView } from "../../../../src/core/goal/schedule/backoff-history.js";
import {
  effectiveWake,
  hostWake,
  type ScheduledOutcome,
  scheduleStep,
} from "../../../../src/core/goal/schedule/schedule-step.js";
import {
  type ContractView,
  contractIdentity,
  nextWakeUp,
  type WakeUp,
} from "../../../../src/core/goal/schedule/scheduler.js";

const NOW = "2026-12-01T10:00:00.000Z";
const LATER = "2026-12-01T10:05:00.000Z";
const P = { baseSeconds: 30, factor: 2, maxSeconds: 100 };
const view = (over: Partial<ContractView> = {}): ContractView => ({
  runtimeState: "eligible",
  selectedTodo: "todo_aaa",
  gateIds: [],
  notBefore: null,
  terminal: false,
  ...over,
});
const sv = (over: Partial<ContractView> = {}, step: number | null = null): ScheduleView => {
  const v = view(over);
  const identity = contractIdentity(v);
  return { view: v, identity, backoff: step === null ? null : { identity, resetToken: null, step } };
};
const runNow: WakeUp = { action: "run_now", at: NOW, why: "work is selected" };
const waitUntil = (at: string): WakeUp => ({ action: "wait_until", at, why: "monitor due" });
const ctx = (mode: "run" | "once" | "until_idle" = "run", atBound = false) => ({
  now: new Date(NOW),
  mode,
  atBound,
  policy: P,
});
const advanced: ScheduledOutcome = { kind: "advanced", changed: true, result: "SUCCESS", wake: runNow };

describe("effectiveWake: the backoff only delays", () => {
  it("backoff step 2 on the same identity: wait 60s instead of running now", () => {
    expect(effectiveWake(runNow, sv({}, 2), new Date(NOW), P)).toEqual({
      action: "wait_until",
      at: "2026-12-01T10:01:00.000Z",
      why: "no change for 2 turn(s) on the same contract; backoff 60s",
    });
  });
  it("a later tick wake-up wins over a shorter backoff", () => {
    expect(effectiveWake(waitUntil(LATER), sv({}, 2), new Date(NOW), P).at).toBe(LATER);
  });
  it("no backoff, step 0, or a waiting contract: the tick's wake-up as is", () => {
    expect(effectiveWake(runNow, sv(), new Date(NOW), P)).toEqual(runNow);
    expect(effectiveWake(runNow, sv({}, 0), new Date(NOW), P)).toEqual(runNow);
    expect(
      effectiveWake(
        waitUntil(LATER),
        sv({ runtimeState: "waiting", selectedTodo: null }, 3),
        new Date(NOW),
        P,
      ),
    ).toEqual(waitUntil(LATER));
  });
  it("a paused or blocked contract is never woken to run, whatever the tick said", () => {
    expect(effectiveWake(runNow, sv({ runtimeState: "paused" }), new Date(NOW), P).action).toBe("stop");
    expect(
      effectiveWake(waitUntil(LATER), sv({ runtimeState: "blocked_health" }), new Date(NOW), P).action,
    ).toBe("repair_health");
  });
});

describe("scheduleStep: goal run's exit codes", () => {
  it("a turn that closed the goal ends goal run as terminal (0), not as stopped with a resume to run", () => {
    // The wake the scheduler gives after the tick reads the goal closed; a paused goal's wake is a stop too.
    const closed = nextWakeUp(view({ terminal: true }), {
      now: new Date(NOW),
      monitorDue: [],
      backoff: null,
    });
    for (const mode of ["run", "until_idle"] as const)
      expect(scheduleStep(advanced, closed, ctx(mode))).toMatchObject({
        kind: "exit",
        code: 0,
        stop: "terminal",
      });
    const paused = nextWakeUp(view({ runtimeState: "paused" }), {
      now: new Date(NOW),
      monitorDue: [],
      backoff: null,
    });
    expect(scheduleStep(advanced, paused, ctx())).toMatchObject({ kind: "exit", code: 1, stop: "stopped" });
  });

  it("terminal 0; a person's gate 1 naming who; throttled 1; stopped 1; blocked_health 2", () => {
    expect(
      scheduleStep(
        { kind: "terminal", closure: "no_followup", wake: { action: "stop", at: null, why: "" } },
        runNow,
        ctx(),
      ),
    ).toMatchObject({ kind: "exit", code: 0, stop: "terminal" });
    expect(
      scheduleStep(
        {
          kind: "waiting_person",
          who: "a maintainer",
          gateId: "todo_publish_gate",
          wake: { action: "ask_user", at: null, why: "" },
        },
        { action: "ask_user", at: null, why: "" },
        ctx(),
      ),
    ).toEqual({
      kind: "exit",
      code: 1,
      stop: "waiting_person",
      why: "a maintainer must decide todo_publish_gate",
      who: "a maintainer",
    });
    expect(
      scheduleStep(
        { kind: "throttled", reason: "turns spent", wake: waitUntil(LATER) },
        waitUntil(LATER),
        ctx(),
      ),
    ).toMatchObject({ kind: "exit", code: 1, stop: "throttled" });
    const stopWake: WakeUp = { action: "stop", at: null, why: "stopped" };
    expect(
      scheduleStep({ kind: "stopped", reason: "paused", wake: stopWake }, stopWake, ctx()),
    ).toMatchObject({
      code: 1,
      stop: "stopped",
    });
    const repair: WakeUp = { action: "repair_health", at: null, why: "dirty" };
    expect(
      scheduleStep({ kind: "stopped", reason: "workspace dirty", wake: repair }, repair, ctx()),
    ).toMatchObject({
      code: 2,
      stop: "blocked_health",
    });
  });
  it("advanced: tick again now, or sleep until the wake-up; --once exits 0; --until-idle exits 1 instead of sleeping", () => {
    expect(scheduleStep(advanced, runNow, ctx())).toEqual({ kind: "tick", why: "work is selected" });
    expect(scheduleStep(advanced, waitUntil(LATER), ctx())).toEqual({
      kind: "sleep",
      until: LATER,
      why: "monitor due",
    });
    expect(scheduleStep(advanced, runNow, ctx("once"))).toMatchObject({
      kind: "exit",
      code: 0,
      stop: "advanced",
    });
    expect(scheduleStep(advanced, waitUntil(LATER), ctx("until_idle"))).toMatchObject({
      kind: "exit",
      code: 1,
    });
    expect(scheduleStep(advanced, runNow, ctx("until_idle"))).toMatchObject({ kind: "tick" });
  });
  it("a failed run retries (with the wake-up) until the backoff is at its bound, then exits 2", () => {
    const f: ScheduledOutcome = { kind: "failed", code: "run_failed", detail: "ESCALATED", wake: runNow };
    expect(scheduleStep(f, waitUntil(LATER), ctx())).toMatchObject({ kind: "sleep", until: LATER });
    expect(scheduleStep(f, waitUntil(LATER), ctx("run", true))).toMatchObject({
      kind: "exit",
      code: 2,
      stop: "failed",
    });
  });
  it("a settlement failure that needs repair exits 2 at once", () => {
    const f: ScheduledOutcome = { kind: "failed", code: "identity_mismatch", detail: "x", wake: runNow };
    expect(scheduleStep(f, runNow, ctx())).toMatchObject({ kind: "exit", code: 2 });
  });
  it("idle saying run_now does not spin: it looks again after the first backoff step", () => {
    const idle: ScheduledOutcome = { kind: "idle", reason: "monitor not due", wake: runNow };
    expect(scheduleStep(idle, runNow, ctx())).toMatchObject({
      kind: "sleep",
      until: "2026-12-01T10:00:30.000Z",
    });
    expect(
      scheduleStep(idle, { action: "wait_state_change", at: null, why: "waiting" }, ctx()),
    ).toMatchObject({
      kind: "exit",
      code: 1,
      stop: "idle",
    });
  });
  it("busy: goal run sleeps until the lease ends; --once exits 1 saying who holds it", () => {
    const b: ScheduledOutcome = {
      kind: "busy",
      holder: "worker-2",
      expiresAt: LATER,
      wake: waitUntil(LATER),
    };
    expect(scheduleStep(b, b.wake, ctx())).toMatchObject({ kind: "sleep", until: LATER });
    expect(scheduleStep(b, b.wake, ctx("once"))).toMatchObject({
      kind: "exit",
      code: 1,
      why: expect.stringContaining("worker-2"),
    });
  });
});

describe("hostWake: when a scheduler or worker looks again", () => {
  it("terminal drops the goal; a person's gate or a stop rechecks later, or drops it without a recheck", () => {
    const stop: WakeUp = { action: "stop", at: null, why: "" };
    expect(
      hostWake({ kind: "terminal", closure: "done", wake: stop }, stop, {
        now: new Date(NOW),
        recheckSeconds: 60,
      }).at,
    ).toBeNull();
    const ask: WakeUp = { action: "ask_user", at: null, why: "" };
    const w: ScheduledOutcome = { kind: "waiting_person", who: "a maintainer", gateId: "g", wake: ask };
    expect(hostWake(w, ask, { now: new Date(NOW), recheckSeconds: 60 }).at).toBe("2026-12-01T10:01:00.000Z");
    expect(hostWake(w, ask, { now: new Date(NOW), recheckSeconds: null }).at).toBeNull();
  });
  it("advanced: now or the wake-up's time, never earlier than now", () => {
    expect(hostWake(advanced, runNow, { now: new Date(NOW), recheckSeconds: null }).at).toBe(NOW);
    expect(hostWake(advanced, waitUntil(LATER), { now: new Date(NOW), recheckSeconds: null }).at).toBe(LATER);
    expect(
      hostWake(advanced, waitUntil("2026-12-01T09:00:00.000Z"), { now: new Date(NOW), recheckSeconds: null })
        .at,
    ).toBe(NOW);
  });
});
