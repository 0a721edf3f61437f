import { describe, expect, it } from "vitest";
import { goalHistory } from "../../../src/core/goal/history.js";
import type { HistoryEvent } from "../../../src/core/goal/history-words.js";
import type { TurnLease } from "../../../src/core/goal/turn/turn-lease.js";
import { turnInFlight } from "../../../src/core/goal/turn-in-flight.js";
import { adv, created, GOAL, gate, REV0, spec } from "./goal-fixtures.js";

// Given a goal stream written out by hand, the history lists each turn with its receipts and every other
// write in order with its origin; the turn in flight is read from the lease and the open turn.

let revision = 0;
const T = (s: number) => `2026-12-01T10:00:${String(s).padStart(2, "0")}.000Z`;
function ev(
  type: string,
  data: unknown,
  at: string,
  origin: "operator" | "runtime" = "runtime",
): HistoryEvent {
  return { id: `e${revision}`, type, data, meta: { at, origin }, revision: revision++ } as HistoryEvent;
}
const id = (turn: string) => ({ goal_id: GOAL, agent_id: "agent_main", turn_instance_id: turn });
const owner = { pid: 7, host: "h1", token: "secret-token" };
const receipt = (run: string) => ({
  run_id: run,
  task_id: "todo_a",
  task_digest: "sha-todo_a",
  status: "SUCCESS",
  envelope_digest: "d1",
  goal_id: GOAL,
  goal_revision: REV0,
});

function stream(): HistoryEvent[] {
  revision = 0;
  const s = spec([adv("todo_a"), gate("todo_gate", "publish")]);
  return [
    ...created(s).map((b) => ev(b.type, b.data, T(0), "operator")),
    ev("turn_lease_acquired", { holder: "agent_main", owner, expires_at: T(59), previous: null }, T(1)),
    ev(
      "turn_bound",
      { identity: id("t1"), work: { kind: "todo", todo_id: "todo_a" }, base_revision: REV0 },
      T(2),
    ),
    ev(
      "turn_effect_prepared",
      { identity: id("t1"), phase: "host_execute", effect_ref: "x#host_execute" },
      T(3),
    ),
    ev("turn_host_executed", { identity: id("t1"), effect_ref: "x#host_execute", run_ref: "run-1" }, T(4)),
    ev(
      "turn_typed_result",
      {
        identity: id("t1"),
        result: {
          kind: "envelope",
          run_id: "run-1",
          task_id: "todo_a",
          status: "SUCCESS",
          envelope_digest: "d1",
        },
      },
      T(5),
    ),
    ev("turn_validated", { identity: id("t1"), receipt: { kind: "run", receipt: receipt("run-1") } }, T(6)),
    ev(
      "turn_effect_prepared",
      { identity: id("t1"), phase: "durable_writeback", effect_ref: "x#durable_writeback" },
      T(7),
    ),
    ev(
      "turn_writeback_accepted",
      { identity: id("t1"), effect_ref: "x#durable_writeback", commit: "c1c1c1", new_revision: "c1c1c1" },
      T(8),
    ),
    ev("todo_completed", { todo_id: "todo_a", receipt: receipt("run-1") }, T(8)),
    ev("goal_revision_recorded", { revision: "c1c1c1", previous: REV0, reason: "turn t1" }, T(8)),
    ev(
      "turn_quota_spent",
      { identity: id("t1"), spend_key: "k", usage: { tokens: 5, cost_usd: 0.5, turns: 1 } },
      T(9),
    ),
    ev("quota_spent", { turn_id: "k", at: T(9), turns: 1, tokens: 5, cost_usd: 0.5 }, T(9)),
    ev(
      "turn_scheduler_applied",
      {
        identity: id("t1"),
        effect_ref: "x#scheduler_apply",
        hint: { action: "stop", not_before: null, why: "closed", terminal: true },
      },
      T(10),
    ),
    ev(
      "turn_scheduler_acked",
      { identity: id("t1"), effect_ref: "x#scheduler_apply", mode: "host_updated" },
      T(11),
    ),
    // A person's write in the same millisecond as a turn's fact is still theirs, never the turn's.
    ev("gate_decided", { todo_id: "todo_gate", decision: "approved", note: "ship" }, T(11), "operator"),
    ev("turn_lease_released", { token: "secret-token", reason: "tick finished" }, T(12)),
    // A tick that found nothing to bind.
    ev("turn_lease_acquired", { holder: "agent_main", owner, expires_at: T(59), previous: null }, T(13)),
    ev("turn_lease_released", { token: "secret-token", reason: "tick finished" }, T(14)),
    // A runtime fact outside any turn's append (todo done on a run's evidence) is a write of its own.
    ev("todo_completed", { todo_id: "todo_gate", receipt: receipt("run-2") }, T(15)),
    ev("turn_lease_acquired", { holder: "agent_main", owner, expires_at: T(50), previous: null }, T(16)),
    ev(
      "turn_bound",
      { identity: id("t2"), work: { kind: "todo", todo_id: "todo_a" }, base_revision: "c1c1c1" },
      T(17),
    ),
    ev(
      "turn_effect_prepared",
      { identity: id("t2"), phase: "host_execute", effect_ref: "y#host_execute" },
      T(18),
    ),
  ];
}

describe("goalHistory", () => {
  it("lists each turn with its receipts, runs, commit, spend, hint and ACK", () => {
    const h = goalHistory(stream());
    const t1 = h.entries.find((e) => e.kind === "turn" && e.number === 1);
    expect(t1).toMatchObject({
      kind: "turn",
      turnId: `${GOAL}/agent_main/t1`,
      work: { kind: "todo", todo_id: "todo_a" },
      lease: { holder: "agent_main", pid: 7, host: "h1" },
      end: "settled",
      startedAt: T(2),
      endedAt: T(11),
      runs: ["run-1"],
      commit: { commit: "c1c1c1", newRevision: "c1c1c1" },
      spend: { turns: 1, tokens: 5, costUsd: 0.5 },
      hint: { action: "stop", notBefore: null, why: "closed", terminal: true },
      ack: { mode: "host_updated" },
      failure: null,
    });
    if (t1?.kind !== "turn") throw new Error("no turn 1");
    expect(t1.phases.map((p) => p.phase)).toEqual([
      "bind",
      "host_execute",
      "host_execute",
      "typed_result",
      "validation",
      "durable_writeback",
      "durable_writeback",
      "quota_spend",
      "scheduler_apply",
      "scheduler_ack",
    ]);
    expect(t1.facts.map((f) => f.type)).toEqual(["todo_completed", "goal_revision_recorded", "quota_spent"]);
    expect(JSON.stringify(h)).not.toContain("secret-token");
  });

  it("keeps every other write in stream order with its origin, and counts the ticks that bound nothing", () => {
    const h = goalHistory(stream());
    expect(
      h.entries.map((e) => (e.kind === "turn" ? `turn ${e.number}` : `${e.origin} ${e.type} ${e.subject}`)),
    ).toEqual([
      "operator goal_created null",
      "operator todo_added todo_a",
      "operator todo_added todo_gate",
      "turn 1",
      "operator gate_decided todo_gate",
      "runtime todo_completed todo_gate",
      "turn 2",
    ]);
    expect(h).toMatchObject({ turns: 2, operatorWrites: 4, idleLeases: 1, leaseTakenAt: T(16) });
    expect(h.open?.number).toBe(2);
    expect(h.open?.end).toBe("in_progress");
  });

  it("ends a released turn as released, or failed when a failure was recorded", () => {
    revision = 0;
    const base = [
      ev(
        "turn_bound",
        { identity: id("t1"), work: { kind: "todo", todo_id: "todo_a" }, base_revision: REV0 },
        T(1),
      ),
    ];
    const released = goalHistory([
      ...base,
      ev("turn_released", { identity: id("t1"), reason: "needs_rebase" }, T(2)),
    ]);
    expect(released.entries[0]).toMatchObject({ end: "released", released: "needs_rebase", endedAt: T(2) });
    expect(released.open).toBeNull();
    revision = 0;
    const failed = goalHistory([
      ...base.map((e) => ({ ...e, revision: revision++ })),
      ev(
        "turn_failed",
        {
          identity: id("t1"),
          failure: { code: "receipt_missing", phase: "validation", detail: "no receipt" },
        },
        T(2),
      ),
      ev("turn_released", { identity: id("t1"), reason: "receipt_missing" }, T(3)),
    ]);
    expect(failed.entries[0]).toMatchObject({
      end: "failed",
      failure: { code: "receipt_missing", phase: "validation" },
    });
  });
});

describe("turnInFlight", () => {
  const lease: TurnLease = { holder: "agent_main", owner, expiresAt: T(50) };
  const h = () => goalHistory(stream());

  it("is running while the lease is live and its process is not known gone, with the open turn's last phase", () => {
    expect(turnInFlight(h(), lease, new Date(T(20)), false)).toMatchObject({
      state: "running",
      holder: "agent_main",
      pid: 7,
      host: "h1",
      since: T(16),
      until: T(50),
      turn: { number: 2, work: { kind: "todo", todo_id: "todo_a" }, phase: "host_execute", phaseAt: T(18) },
    });
    expect(turnInFlight(h(), lease, new Date(T(20)), null)?.state).toBe("running");
  });

  it("is stalled when the lease ran out or its process is gone", () => {
    expect(turnInFlight(h(), lease, new Date(T(50)), false)).toMatchObject({ state: "stalled" });
    expect(turnInFlight(h(), lease, new Date(T(51)), false)?.why).toMatch(/ran out at/);
    expect(turnInFlight(h(), lease, new Date(T(20)), true)?.why).toMatch(/process 7 on h1 is gone/);
  });

  it("is unsettled when a turn is open and nobody holds the lease; nothing when neither", () => {
    expect(turnInFlight(h(), null, new Date(T(20)), null)).toMatchObject({
      state: "unsettled",
      holder: null,
      since: T(17),
      turn: { number: 2 },
    });
    expect(turnInFlight({ open: null, leaseTakenAt: null }, null, new Date(T(20)), null)).toBeNull();
  });

  it("holds the lease with no turn bound yet: running, choosing the work", () => {
    expect(turnInFlight({ open: null, leaseTakenAt: T(16) }, lease, new Date(T(20)), false)).toMatchObject({
      state: "running",
      turn: null,
      why: expect.stringMatching(/choosing the work/),
    });
  });
});
