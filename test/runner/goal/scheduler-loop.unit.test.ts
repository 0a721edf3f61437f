import { describe, expect, it } from "vitest";
import {
  type ContractView,
  contractIdentity,
  type WakeUp,
} from "../../../src/core/goal/schedule/scheduler.js";
import {
  runScheduler,
  type ScheduledGoal,
  type SchedulerEvent,
} from "../../../src/runner/goal/schedule/store-scheduler.js";
import type { TickOutcome, TickRequest } from "../../../src/runner/goal/turn/tick-outcome.js";

// loopgate scheduler over scripted ticks per goal: one turn at a time per goal, each goal its own wake-up.

const T0 = Date.parse("2026-12-01T10:00:00.000Z");
const at = (s: number) => new Date(T0 + s * 1000).toISOString();
const runNow: WakeUp = { action: "run_now", at: at(0), why: "work is selected" };
const adv = (todo: string, wake: WakeUp = runNow): TickOutcome => ({
  kind: "advanced",
  turn: { goal_id: "g", agent_id: "a", turn_instance_id: todo },
  work: { kind: "todo", todo_id: todo },
  result: "SUCCESS",
  changed: true,
  wake,
});
const terminal: TickOutcome = {
  kind: "terminal",
  closure: "done",
  wake: { action: "stop", at: null, why: "terminal" },
};
const v: ContractView = {
  runtimeState: "eligible",
  selectedTodo: "t",
  gateIds: [],
  notBefore: null,
  terminal: false,
};

function harness(scripts: Record<string, TickOutcome[]>, goals?: () => Promise<ScheduledGoal[]>) {
  let now = T0;
  const order: string[] = [];
  const sleeps: string[] = [];
  const inFlight = new Set<string>();
  let overlap = false;
  const events: SchedulerEvent[] = [];
  const controller = new AbortController();
  const deps = {
    goals: goals ?? (async () => Object.keys(scripts).map((goalId) => ({ goalId, agentId: "a" }))),
    clock: () => new Date(now),
    sleep: async (until: string) => {
      sleeps.push(until);
      now = Math.max(now, Date.parse(until));
      // Stop once every script is spent.
      if (Object.values(scripts).every((s) => s.length === 0)) controller.abort("done");
    },
    probe: async () => ({ view: v, identity: contractIdentity(v), backoff: null }),
    tick: async (req: TickRequest) => {
      if (inFlight.has(req.goalId)) overlap = true;
      inFlight.add(req.goalId);
      order.push(req.goalId);
      const o = scripts[req.goalId]?.shift();
      await Promise.resolve();
      inFlight.delete(req.goalId);
      if (!o) throw new Error(`${req.goalId}: ticked after its script ended`);
      return o;
    },
  };
  return {
    run: (once = false) =>
      runScheduler(deps, {
        once,
        recheckSeconds: 60,
        signal: controller.signal,
        onEvent: (e) => events.push(e),
      }),
    order,
    sleeps,
    events,
    overlap: () => overlap,
  };
}

describe("loopgate scheduler", () => {
  it("ticks each goal when it is due, sleeps to the earliest wake-up, drops a terminal goal", async () => {
    const h = harness({
      g_a: [adv("a1"), adv("a2", { action: "wait_until", at: at(300), why: "monitor" }), terminal],
      g_b: [adv("b1", { action: "wait_until", at: at(120), why: "monitor" }), terminal],
    });
    const r = await h.run();
    expect(r).toMatchObject({ code: 0, ticks: 5, failures: 0 });
    expect(h.order).toEqual(["g_a", "g_b", "g_a", "g_b", "g_a"]);
    expect(h.sleeps.slice(0, 2)).toEqual([at(60), at(120)]);
    expect(h.overlap()).toBe(false);
    expect(
      h.events.filter((e) => e.kind === "next" && e.at === null).map((e) => (e as { goalId: string }).goalId),
    ).toEqual(["g_b", "g_a"]);
  });

  it("--once ticks every due goal once; a goal waiting on a person is rechecked later, not dropped", async () => {
    const ask: WakeUp = { action: "ask_user", at: null, why: "gate" };
    const h = harness({
      g_a: [{ kind: "waiting_person", who: "a maintainer", gateId: "todo_gate", wake: ask }],
      g_b: [adv("b1")],
    });
    const r = await h.run(true);
    expect(r).toMatchObject({ code: 0, ticks: 2 });
    expect(h.order).toEqual(["g_a", "g_b"]);
    expect(h.events).toContainEqual({
      kind: "next",
      goalId: "g_a",
      at: at(60),
      why: "a maintainer must decide todo_gate; looking again in 60s",
    });
  });

  it("a tick that throws is reported, the other goals go on, and --once exits 2", async () => {
    const h = harness({ g_a: [], g_b: [adv("b1")] });
    const r = await h.run(true);
    expect(r).toMatchObject({ code: 2, ticks: 2, failures: 1 });
    expect(h.events.find((e) => e.kind === "error")).toMatchObject({ goalId: "g_a" });
  });

  it("goals listed later are picked up on the next pass", async () => {
    let pass = 0;
    const h = harness(
      { g_a: [adv("a1", { action: "wait_until", at: at(30), why: "x" }), terminal], g_new: [terminal] },
      async () =>
        pass++ === 0
          ? [{ goalId: "g_a", agentId: "a" }]
          : [
              { goalId: "g_a", agentId: "a" },
              { goalId: "g_new", agentId: "a" },
            ],
    );
    await h.run();
    expect(h.order).toEqual(["g_a", "g_a", "g_new"]);
  });
});
