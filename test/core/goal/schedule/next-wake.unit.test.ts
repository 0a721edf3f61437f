import { describe, expect, it } from "vitest";
import type { ScheduleView } from "../../../../src/core/goal/schedule/backoff-history.js";
import { nextWake, RECHECK_SECONDS, startWake } from "../../../../src/core/goal/schedule/next-wake.js";
import type { ScheduledOutcome } from "../../../../src/core/goal/schedule/schedule-step.js";
import {
  type ContractView,
  contractIdentity,
  type WakeUp,
} from "../../../../src/core/goal/schedule/scheduler.js";

// The one "when to tick next" decision that `goal run`, `loopgate scheduler` and a worker's goal turn
// carry out. The values are those of the rules: backoff base 30 s doubling to at most 100 s; a long-lived
// host looks again at a goal waiting on a person every 60 s.
const NOW = "2026-12-01T10:00:00.000Z";
const LATER = "2026-12-01T10:05:00.000Z";
const P = { baseSeconds: 30, factor: 2, maxSeconds: 100 };
const sv = (over: Partial<ContractView> = {}, step: number | null = null): ScheduleView => {
  const view: ContractView = {
    runtimeState: "eligible",
    selectedTodo: "todo_aaa",
    gateIds: [],
    notBefore: null,
    terminal: false,
    ...over,
  };
  const identity = contractIdentity(view);
  return { view, identity, backoff: step === null ? null : { identity, resetToken: null, step } };
};
const runNow: WakeUp = { action: "run_now", at: NOW, why: "work is selected" };
const advanced = (wake: WakeUp = runNow): ScheduledOutcome => ({
  kind: "advanced",
  changed: false,
  result: "SUCCESS",
  wake,
});
const ask: WakeUp = { action: "ask_user", at: null, why: "a person must decide a gate" };
const waiting: ScheduledOutcome = { kind: "waiting_person", who: "a maintainer", gateId: "g1", wake: ask };
const loop = (mode: "run" | "once" | "until_idle" = "run") => ({ kind: "loop" as const, mode });
const longLived = (recheckSeconds: number | null = 60) => ({ kind: "long_lived" as const, recheckSeconds });

describe("nextWake in goal run's loop", () => {
  it("no backoff: an advanced turn ticks again now", () => {
    expect(nextWake(advanced(), sv(), { now: new Date(NOW), host: loop(), policy: P })).toEqual({
      wake: runNow,
      step: { kind: "tick", why: "work is selected" },
    });
  });
  it("backoff step 2 on the same contract: sleep 60 s (30·2), the wake-up saying why", () => {
    const r = nextWake(advanced(), sv({}, 2), { now: new Date(NOW), host: loop(), policy: P });
    expect(r.wake).toEqual({
      action: "wait_until",
      at: "2026-12-01T10:01:00.000Z",
      why: "no change for 2 turn(s) on the same contract; backoff 60s",
    });
    expect(r.step).toMatchObject({ kind: "sleep", until: "2026-12-01T10:01:00.000Z" });
  });
  it("--until-idle exits 1 instead of sleeping; --once exits 0 after an advanced turn", () => {
    expect(
      nextWake(advanced(), sv({}, 2), { now: new Date(NOW), host: loop("until_idle"), policy: P }).step,
    ).toMatchObject({ kind: "exit", code: 1 });
    expect(
      nextWake(advanced(), sv(), { now: new Date(NOW), host: loop("once"), policy: P }).step,
    ).toMatchObject({
      kind: "exit",
      code: 0,
      stop: "advanced",
    });
  });
  it("a failed run with the backoff at its bound exits 2 (step 3: 30·2² = 120 > 100)", () => {
    const f: ScheduledOutcome = { kind: "failed", code: "run_failed", detail: "ESCALATED", wake: runNow };
    expect(nextWake(f, sv({}, 3), { now: new Date(NOW), host: loop(), policy: P }).step).toMatchObject({
      kind: "exit",
      code: 2,
      stop: "failed",
    });
    expect(nextWake(f, sv({}, 1), { now: new Date(NOW), host: loop(), policy: P }).step).toMatchObject({
      kind: "sleep",
      until: "2026-12-01T10:00:30.000Z",
    });
  });
  it("a paused goal is never woken to run, whatever the tick said", () => {
    const r = nextWake(advanced(), sv({ runtimeState: "paused" }), {
      now: new Date(NOW),
      host: loop(),
      policy: P,
    });
    expect(r.wake.action).toBe("stop");
    expect(r.step).toMatchObject({ kind: "exit", code: 1, stop: "stopped" });
  });
});

describe("nextWake in a long-lived host (the scheduler)", () => {
  it("a person's gate: looked at again after the recheck interval, or dropped without one", () => {
    expect(nextWake(waiting, sv(), { now: new Date(NOW), host: longLived(), policy: P }).step).toMatchObject({
      kind: "sleep",
      until: "2026-12-01T10:01:00.000Z",
    });
    expect(
      nextWake(waiting, sv(), { now: new Date(NOW), host: longLived(null), policy: P }).step,
    ).toMatchObject({
      kind: "exit",
      stop: "waiting_person",
    });
  });
  it("terminal: dropped", () => {
    const stop: WakeUp = { action: "stop", at: null, why: "terminal closure holds", terminal: true };
    const t: ScheduledOutcome = { kind: "terminal", closure: "done", wake: stop };
    expect(nextWake(t, sv(), { now: new Date(NOW), host: longLived(), policy: P }).step).toEqual({
      kind: "exit",
      code: 0,
      stop: "terminal",
      why: "terminal closure: done",
    });
  });
  it("advanced: now, or the later of the wake-up and the backoff", () => {
    expect(
      nextWake(advanced(), sv(), { now: new Date(NOW), host: longLived(), policy: P }).step,
    ).toMatchObject({
      kind: "sleep",
      until: NOW,
    });
    const wait: WakeUp = { action: "wait_until", at: LATER, why: "monitor due" };
    expect(
      nextWake(advanced(wait), sv({}, 2), { now: new Date(NOW), host: longLived(), policy: P }).step,
    ).toMatchObject({
      kind: "sleep",
      until: LATER,
    });
  });
  it("the scheduler's recheck interval is one minute", () => {
    expect(RECHECK_SECONDS).toBe(60);
  });
});

describe("startWake: a restarted host honours the backoff already earned", () => {
  it("step 2: wait 60 s before the first tick; none or step 0: tick now", () => {
    expect(startWake(sv({}, 2), new Date(NOW), P)).toEqual({
      until: "2026-12-01T10:01:00.000Z",
      why: "no change for 2 turn(s) on the same contract; backoff 60s",
    });
    expect(startWake(sv(), new Date(NOW), P)).toBeNull();
    expect(startWake(sv({}, 0), new Date(NOW), P)).toBeNull();
  });
});
