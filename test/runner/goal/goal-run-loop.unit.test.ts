import { describe, expect, it } from "vitest";
import type { ScheduleView } from "../../../src/core/goal/schedule/backoff-history.js";
import {
  type ContractView,
  contractIdentity,
  type WakeUp,
} from "../../../src/core/goal/schedule/scheduler.js";
import { type LoopEvent, type LoopResult, runGoalLoop } from "../../../src/runner/goal/schedule/goal-loop.js";
import type { TickOutcome, TickRequest } from "../../../src/runner/goal/turn/tick-outcome.js";

// The goal run loop over a scripted Tick: a fake clock that a fake sleeper moves, so nothing waits.

const T0 = Date.parse("2026-12-01T10:00:00.000Z");
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
const id = (n: number) => ({ goal_id: "g", agent_id: "a", turn_instance_id: `t${n}` });
const runNow = (s: number): WakeUp => ({ action: "run_now", at: at(s), why: "work is selected" });
const waitTill = (s: number, why = "the monitor is due then"): WakeUp => ({
  action: "wait_until",
  at: at(s),
  why,
});
const advanced = (n: number, todo: string, wake: WakeUp): TickOutcome => ({
  kind: "advanced",
  turn: id(n),
  work: { kind: "todo", todo_id: todo },
  result: "SUCCESS",
  changed: true,
  wake,
});
const view = (over: Partial<ContractView> = {}): ContractView => ({
  runtimeState: "eligible",
  selectedTodo: "todo_a",
  gateIds: [],
  notBefore: null,
  terminal: false,
  ...over,
});
const plain = (v = view()): ScheduleView => ({ view: v, identity: contractIdentity(v), backoff: null });

function harness(script: TickOutcome[], probes: ScheduleView[] = [], opts: { abortAfterTick?: number } = {}) {
  let now = T0;
  const sleeps: string[] = [];
  const ticks: TickRequest[] = [];
  const events: LoopEvent[] = [];
  const controller = new AbortController();
  let p = 0;
  const deps = {
    clock: () => new Date(now),
    sleep: async (until: string) => {
      sleeps.push(until);
      now = Math.max(now, Date.parse(until));
    },
    probe: async () => probes[Math.min(p++, probes.length - 1)] ?? plain(),
    tick: async (req: TickRequest) => {
      ticks.push(req);
      const o = script.shift();
      if (!o) throw new Error("the script ran out: the loop ticked once too often");
      req.onProgress?.({ turn: ticks.length, todo: "todo_a", phase: "host_execute", detail: "run started" });
      if (opts.abortAfterTick === ticks.length) controller.abort("SIGINT");
      return o;
    },
  };
  const go = (mode: "run" | "once" | "until_idle" = "run"): Promise<LoopResult> =>
    runGoalLoop(deps, {
      goalId: "g",
      agentId: "a",
      mode,
      signal: controller.signal,
      onEvent: (e) => events.push(e),
    });
  return { go, sleeps, ticks, events, left: script };
}

describe("goal run loop", () => {
  it("ticks while work is selected, sleeps as the wake-up says, and exits 0 at terminal closure", async () => {
    const h = harness([
      advanced(1, "todo_a", runNow(0)),
      advanced(2, "todo_b", waitTill(600)),
      advanced(3, "todo_c", runNow(600)),
      {
        kind: "terminal",
        closure: "every frontier item is proved",
        wake: { action: "stop", at: null, why: "terminal" },
      },
    ]);
    const r = await h.go();
    expect(r).toMatchObject({ code: 0, stop: "terminal", turns: 4 });
    expect(h.sleeps).toEqual([at(600)]);
    expect(h.left).toEqual([]);
    expect(h.events.filter((e) => e.kind === "progress").map((e) => e.turn)).toEqual([1, 2, 3, 4]);
    expect(h.events.filter((e) => e.kind === "sleep")).toEqual([
      { kind: "sleep", turn: 2, until: at(600), why: "the monitor is due then" },
    ]);
  });

  it("stops at a person's gate with exit 1 naming who must act", async () => {
    const ask: WakeUp = { action: "ask_user", at: null, why: "a person must decide a gate" };
    const h = harness([
      advanced(1, "todo_a", runNow(0)),
      {
        kind: "waiting_person",
        who: "a maintainer (decision scope publish)",
        gateId: "todo_publish_gate",
        wake: ask,
      },
    ]);
    const r = await h.go();
    expect(r).toMatchObject({
      code: 1,
      stop: "waiting_person",
      who: "a maintainer (decision scope publish)",
      why: "a maintainer (decision scope publish) must decide todo_publish_gate",
    });
    expect(h.sleeps).toEqual([]);
  });

  it("a turn whose wake-up asks a person is followed by one tick that names who; a due monitor polls first", async () => {
    const ask: WakeUp = { action: "ask_user", at: null, why: "a person must decide a gate" };
    const waiting: TickOutcome = {
      kind: "waiting_person",
      who: "a person deciding publish",
      gateId: "todo_publish_gate",
      wake: ask,
    };
    // The acceptance turn ends on ask_user; the next tick is a due monitor's poll (also ask_user); the
    // one after it runs no turn and says who must act. Three ticks, no sleep, who named.
    const h = harness([advanced(1, "todo_a", ask), advanced(2, "todo_watch", ask), waiting]);
    const r = await h.go();
    expect(r).toMatchObject({ code: 1, stop: "waiting_person", who: "a person deciding publish", turns: 3 });
    expect(h.sleeps).toEqual([]);
    // Any other exit after an advanced turn is not followed by a tick (the script would run out).
    const stop: WakeUp = { action: "stop", at: null, why: "the goal is stopped" };
    expect(await harness([advanced(1, "todo_a", stop)]).go()).toMatchObject({
      code: 1,
      stop: "stopped",
      turns: 1,
    });
  });

  it("throttled exits 1 without sleeping through the window; blocked health exits 2", async () => {
    const t = harness([{ kind: "throttled", reason: "20 turns per 24h spent", wake: waitTill(3600) }]);
    expect(await t.go()).toMatchObject({ code: 1, stop: "throttled" });
    expect(t.sleeps).toEqual([]);
    const b = harness([
      {
        kind: "stopped",
        reason: "workspace dirty",
        wake: { action: "repair_health", at: null, why: "repair" },
      },
    ]);
    expect(await b.go()).toMatchObject({ code: 2, stop: "blocked_health" });
  });

  it("--once makes one tick: exit 0 when it advanced", async () => {
    const h = harness([advanced(1, "todo_a", runNow(0)), advanced(2, "todo_b", runNow(0))]);
    expect(await h.go("once")).toMatchObject({ code: 0, stop: "advanced", turns: 1 });
    expect(h.ticks).toHaveLength(1);
  });

  it("--until-idle ticks while work runs now and exits 1 where it would sleep", async () => {
    const h = harness([advanced(1, "todo_a", runNow(0)), advanced(2, "todo_b", waitTill(900))]);
    const r = await h.go("until_idle");
    expect(r).toMatchObject({ code: 1, turns: 2 });
    expect(r.why).toContain(at(900));
    expect(h.sleeps).toEqual([]);
  });

  it("a failing run is retried after the recorded turns' backoff, and exits 2 once the backoff is at its bound", async () => {
    const failed = (n: number): TickOutcome => ({
      kind: "failed",
      turn: id(n),
      code: "run_failed",
      detail: "ESCALATED: unit gate failed",
      wake: runNow(0),
    });
    const v = view();
    const identity = contractIdentity(v);
    const backoff = (step: number): ScheduleView => ({
      view: v,
      identity,
      backoff: { identity, resetToken: null, step },
    });
    // Probes: before the first tick (no turns yet), then after each turn.
    const policy = { baseSeconds: 30, factor: 2, maxSeconds: 100 };
    const h = harness(
      [failed(1), failed(2), failed(3), failed(4), failed(5)],
      [plain(v), backoff(0), backoff(1), backoff(2), backoff(3)],
    );
    let now = T0;
    const r = await runGoalLoop(
      {
        tick: async () => {
          const o = h.left.shift();
          if (!o) throw new Error("script ran out");
          return o;
        },
        probe: (() => {
          const ps = [plain(v), backoff(0), backoff(1), backoff(2), backoff(3)];
          return async () => ps.shift() ?? backoff(3);
        })(),
        sleep: async (until) => {
          h.sleeps.push(until);
          now = Date.parse(until);
        },
        clock: () => new Date(now),
        policy,
      },
      { goalId: "g", agentId: "a", mode: "run", signal: new AbortController().signal },
    );
    // steps 0, 1, 2 wait 0s, 30s, 60s; step 3 is the bound (100s): stop there with exit 2.
    expect(h.sleeps).toEqual([at(30), at(90)]);
    expect(r).toMatchObject({ code: 2, stop: "failed", turns: 4 });
    expect(r.why).toContain("backoff at its bound");
  });

  it("a restarted run honours the backoff the recorded turns earned before its first tick", async () => {
    const v = view();
    const identity = contractIdentity(v);
    const backedOff: ScheduleView = { view: v, identity, backoff: { identity, resetToken: null, step: 2 } };
    const h = harness(
      [
        advanced(1, "todo_a", runNow(0)),
        { kind: "terminal", closure: "done", wake: { action: "stop", at: null, why: "" } },
      ],
      [backedOff, plain(v)],
    );
    expect(await h.go()).toMatchObject({ code: 0, turns: 2 });
    expect(h.sleeps).toEqual([at(60)]);
    const idle = harness([], [backedOff]);
    expect(await idle.go("until_idle")).toMatchObject({ code: 1, stop: "idle", turns: 0 });
  });

  it("a paused contract is never ticked again even when the tick's wake-up says run now", async () => {
    const paused = view({ runtimeState: "paused", selectedTodo: null });
    const h = harness(
      [advanced(1, "todo_a", runNow(0)), advanced(2, "todo_b", runNow(0))],
      [plain(), plain(paused)],
    );
    expect(await h.go()).toMatchObject({ code: 1, stop: "stopped", turns: 1 });
    expect(h.ticks).toHaveLength(1);
  });

  it("an interrupt during a turn lets it settle, then stops before the next tick (130)", async () => {
    const h = harness([advanced(1, "todo_a", runNow(0)), advanced(2, "todo_b", runNow(0))], [], {
      abortAfterTick: 1,
    });
    expect(await h.go()).toMatchObject({ code: 130, stop: "interrupted", turns: 1 });
    expect(h.ticks).toHaveLength(1);
    expect(h.events.at(-1)).toEqual({ kind: "interrupted", turn: 1 });
  });

  it("busy: sleeps until the other turn's lease ends, then ticks again", async () => {
    const h = harness([
      { kind: "busy", holder: "worker-7", expiresAt: at(45), wake: waitTill(45) },
      { kind: "terminal", closure: "done", wake: { action: "stop", at: null, why: "" } },
    ]);
    expect(await h.go()).toMatchObject({ code: 0, turns: 2 });
    expect(h.sleeps).toEqual([at(45)]);
  });
});
