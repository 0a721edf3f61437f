import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { TurnEvent } from "../../../../src/core/events/goal/turn-events.js";
import { contractIdentity, nextBackoff } from "../../../../src/core/goal/schedule/scheduler.js";
import { type MonitorEvent, monitorDecider } from "../../../../src/core/goal/turn/monitor.js";
import type { Readback, TurnCommand } from "../../../../src/core/goal/turn/turn-commands.js";
import { nextTurnPhase, turnDecider } from "../../../../src/core/goal/turn/turn-decider.js";
import { fold } from "../../../support/decider.js";
import { ENVELOPE, HINT, HX, ID, KEY, OTHER, RECEIPT, REV, SA, USAGE, WB } from "./turn-fixtures.js";

/** Apply commands one by one, keeping what the decider accepts (a refusal appends nothing). */
function run<S, E, C>(d: { initialState(): S; evolve(s: S, e: E): S; decide(c: C, s: S): E[] }, cmds: C[]) {
  let s = d.initialState();
  const log: E[] = [];
  for (const c of cmds) {
    try {
      for (const e of d.decide(c, s)) {
        log.push(e);
        s = d.evolve(s, e);
      }
    } catch {
      /* refused */
    }
  }
  return log;
}

const turnCommand: fc.Arbitrary<TurnCommand> = fc.oneof(
  fc.constantFrom<TurnCommand>(
    { type: "bind", identity: ID, work: { kind: "todo", todo_id: "todo_parse" }, baseRevision: REV },
    { type: "prepare_effect", identity: ID, phase: "host_execute", effectRef: HX },
    { type: "record_host_execute", identity: ID, effectRef: HX, runRef: "run_1" },
    { type: "record_typed_result", identity: ID, result: ENVELOPE },
    { type: "record_validation", identity: ID, receipt: RECEIPT },
    { type: "record_validation", identity: ID, receipt: null },
    { type: "prepare_effect", identity: ID, phase: "durable_writeback", effectRef: WB },
    {
      type: "record_writeback",
      identity: ID,
      effectRef: WB,
      outcome: { kind: "accepted", commit: "c1", newRevision: "rev_b" },
    },
    { type: "record_writeback", identity: ID, effectRef: WB, outcome: { kind: "rejected", reason: "x" } },
    {
      type: "record_writeback",
      identity: ID,
      effectRef: WB,
      outcome: { kind: "cas_conflict", currentRevision: "rev_c" },
    },
    { type: "rebase", identity: ID, toRevision: "rev_c" },
    {
      type: "resolve_readback",
      identity: ID,
      phase: "durable_writeback",
      effectRef: WB,
      readback: { found: "absent" },
    },
    {
      type: "resolve_readback",
      identity: ID,
      phase: "durable_writeback",
      effectRef: WB,
      readback: { found: "unknown", reason: "?" },
    },
    { type: "record_spend", identity: ID, spendKey: KEY, usage: USAGE, outcome: { kind: "accepted" } },
    {
      type: "record_spend",
      identity: ID,
      spendKey: KEY,
      usage: USAGE,
      outcome: { kind: "rejected", reason: "x" },
    },
    {
      type: "record_spend",
      identity: OTHER,
      spendKey: "goal_csv/builder/t0",
      usage: USAGE,
      outcome: { kind: "accepted" },
    },
    { type: "record_scheduler_apply", identity: ID, effectRef: SA, hint: HINT },
    {
      type: "record_scheduler_ack",
      identity: ID,
      effectRef: SA,
      outcome: { kind: "ack", mode: "host_match" },
    },
  ),
);

describe("turn properties", () => {
  it("spend never precedes an accepted writeback, and happens at most once", () => {
    fc.assert(
      fc.property(fc.array(turnCommand, { maxLength: 40 }), (cmds) => {
        const log = run(turnDecider, cmds);
        const spend = log.findIndex((e) => e.type === "turn_quota_spent");
        const wb = log.findIndex((e) => e.type === "turn_writeback_accepted");
        if (spend >= 0) expect(wb).toBeGreaterThanOrEqual(0);
        if (spend >= 0) expect(wb).toBeLessThan(spend);
        expect(log.filter((e) => e.type === "turn_quota_spent").length).toBeLessThanOrEqual(1);
        const ack = log.findIndex((e) => e.type === "turn_scheduler_acked");
        if (ack >= 0) expect(spend).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: 500 },
    );
  });

  it("a monitor never creates two successors for one generation", () => {
    const poll = fc.record({
      type: fc.constant("record_poll" as const),
      operationId: fc.constantFrom("op1", "op2", "op3", "op4"),
      now: fc
        .constantFrom("2026-12-01T10:00:00.000Z", "2026-12-01T10:05:00.000Z", "2026-12-01T10:10:00.000Z")
        .map((t) => new Date(t)),
      resultHash: fc.constantFrom("h1", "h2", "h3"),
      generation: fc.integer({ min: 0, max: 3 }),
      successor: fc.constant({ todo_id: "todo_follow", content: "follow up" }),
    });
    fc.assert(
      fc.property(fc.array(poll, { maxLength: 30 }), (polls) => {
        const log = run(monitorDecider, [
          {
            type: "arm",
            todoId: "todo_watch",
            policy: { cadenceSeconds: 60, backoffFactor: 1, backoffMaxSeconds: 60, maxFailures: 3 },
            now: new Date("2026-12-01T10:00:00.000Z"),
          },
          ...polls,
        ]);
        const gens = log.flatMap((e: MonitorEvent) =>
          e.type === "monitor_successor_created" ? [e.data.generation] : [],
        );
        expect(new Set(gens).size).toBe(gens.length);
        expect(gens).toEqual([...gens].sort((a, b) => a - b));
      }),
      { numRuns: 500 },
    );
  });

  it("backoff never grows across an identity change or a new resetToken", () => {
    const ids = ["todo_a", "todo_b"].map((t) =>
      contractIdentity({
        runtimeState: "eligible",
        selectedTodo: t,
        gateIds: [],
        notBefore: null,
        terminal: false,
      }),
    );
    const turn = fc.record({
      identity: fc.constantFrom(...ids),
      changed: fc.boolean(),
      resetToken: fc.constantFrom(null, "r1", "r2"),
    });
    fc.assert(
      fc.property(fc.array(turn, { maxLength: 30 }), (turns) => {
        let prev = null as ReturnType<typeof nextBackoff> | null;
        for (const t of turns) {
          const next = nextBackoff(prev, t);
          if (!prev || prev.identity !== t.identity || prev.resetToken !== t.resetToken || t.changed)
            expect(next.step).toBe(0);
          else expect(next.step).toBeGreaterThanOrEqual(prev.step);
          prev = next;
        }
      }),
    );
  });
});

/** A host that follows nextTurnPhase against a world (the goal workspace commits, the runs, the host cadence). */
interface World {
  /** Every effect carried out, in order (a duplicate shows up as a second entry). */
  runs: { ref: string; run_ref: string }[];
  commits: { ref: string; commit: string; new_revision: string }[];
  host: string | null;
}
type Micro = { kind: "append"; cmd: TurnCommand } | { kind: "effect"; apply: (w: World) => void };

function plan(events: TurnEvent[], w: World): Micro[] {
  const s = fold(turnDecider, events);
  const n = nextTurnPhase(s);
  const a = (cmd: TurnCommand): Micro => ({ kind: "append", cmd });
  switch (n.kind) {
    case "bind":
      return [
        a({ type: "bind", identity: ID, work: { kind: "todo", todo_id: "todo_parse" }, baseRevision: REV }),
      ];
    case "execute":
      return n.phase === "host_execute"
        ? [
            a({ type: "prepare_effect", identity: ID, phase: n.phase, effectRef: n.effectRef }),
            {
              kind: "effect",
              apply: (x) => {
                x.runs.push({ ref: n.effectRef, run_ref: "run_1" });
              },
            },
            a({ type: "record_host_execute", identity: ID, effectRef: n.effectRef, runRef: "run_1" }),
          ]
        : [
            a({ type: "prepare_effect", identity: ID, phase: n.phase, effectRef: n.effectRef }),
            {
              kind: "effect",
              apply: (x) => {
                x.commits.push({
                  ref: n.effectRef,
                  commit: `c${x.commits.length + 1}`,
                  new_revision: "rev_b",
                });
              },
            },
            a({
              type: "record_writeback",
              identity: ID,
              effectRef: n.effectRef,
              outcome: { kind: "accepted", commit: "c1", newRevision: "rev_b" },
            }),
          ];
    case "readback": {
      const runs = w.runs.filter((r) => r.ref === n.effectRef);
      const commits = w.commits.filter((c) => c.ref === n.effectRef);
      const hits = n.phase === "host_execute" ? runs.length : commits.length;
      const readback: Readback =
        hits > 1
          ? { found: "unknown", reason: "ambiguous" }
          : hits === 0
            ? { found: "absent" }
            : n.phase === "host_execute"
              ? { found: "committed", payload: { phase: "host_execute", runRef: runs[0]?.run_ref ?? "" } }
              : {
                  found: "committed",
                  payload: {
                    phase: "durable_writeback",
                    commit: commits[0]?.commit ?? "",
                    newRevision: commits[0]?.new_revision ?? "",
                  },
                };
      return [
        a({ type: "resolve_readback", identity: ID, phase: n.phase, effectRef: n.effectRef, readback }),
      ];
    }
    case "record":
      if (n.phase === "typed_result")
        return [a({ type: "record_typed_result", identity: ID, result: ENVELOPE })];
      if (n.phase === "validation") return [a({ type: "record_validation", identity: ID, receipt: RECEIPT })];
      return [
        a({
          type: "record_spend",
          identity: ID,
          spendKey: KEY,
          usage: USAGE,
          outcome: { kind: "accepted" },
        }),
      ];
    case "scheduler_apply":
      return [
        a({ type: "record_scheduler_apply", identity: ID, effectRef: n.effectRef, hint: HINT }),
        {
          kind: "effect",
          apply: (x) => {
            x.host = HINT.not_before;
          },
        },
        a({
          type: "record_scheduler_ack",
          identity: ID,
          effectRef: n.effectRef,
          outcome: { kind: "ack", mode: "host_updated" },
        }),
      ];
    case "scheduler_ack": {
      const ack = (mode: "host_match" | "host_updated") =>
        a({
          type: "record_scheduler_ack",
          identity: ID,
          effectRef: n.effectRef,
          outcome: { kind: "ack", mode },
        });
      return w.host === HINT.not_before
        ? [ack("host_match")]
        : [
            {
              kind: "effect",
              apply: (x) => {
                x.host = HINT.not_before;
              },
            },
            ack("host_updated"),
          ];
    }
    default:
      return [];
  }
}

/** Runs up to `budget` micro-steps (Infinity: to the end); a crash is simply stopping. */
function drive(events: TurnEvent[], w: World, budget: number): { events: TurnEvent[]; used: number } {
  let used = 0;
  for (;;) {
    const steps = plan(events, w);
    if (steps.length === 0) return { events, used };
    for (const m of steps) {
      if (used >= budget) return { events, used };
      used++;
      if (m.kind === "effect") m.apply(w);
      else events = [...events, ...turnDecider.decide(m.cmd, fold(turnDecider, events))];
    }
  }
}

const settlement = (es: TurnEvent[]) =>
  es.filter((e) =>
    [
      "turn_writeback_accepted",
      "turn_quota_spent",
      "turn_host_executed",
      "turn_typed_result",
      "turn_validated",
    ].includes(e.type),
  );

describe("turn: any crash point + readback yields the uninterrupted facts", () => {
  const clean = drive([], { runs: [], commits: [], host: null }, Infinity);
  it("the uninterrupted turn ends done with one commit, one spend, one ACK", () => {
    expect(nextTurnPhase(fold(turnDecider, clean.events))).toEqual({ kind: "done" });
    // bind 1 + host_execute 3 + typed 1 + validation 1 + writeback 3 + spend 1 + scheduler 3
    expect(clean.used).toBe(13);
  });
  for (let k = 0; k <= clean.used; k++)
    it(`crash after micro-step ${k}`, () => {
      const world: World = { runs: [], commits: [], host: null };
      const crashed = drive([], world, k);
      const resumed = drive(crashed.events, world, Infinity).events;
      expect(nextTurnPhase(fold(turnDecider, resumed))).toEqual({ kind: "done" });
      expect(world.commits).toHaveLength(1);
      expect(world.runs).toHaveLength(1);
      expect(settlement(resumed)).toEqual(settlement(clean.events));
      expect(resumed.filter((e) => e.type === "turn_quota_spent")).toHaveLength(1);
      expect(resumed.filter((e) => e.type === "turn_scheduler_acked")).toHaveLength(1);
      expect(resumed.filter((e) => e.type === "turn_writeback_accepted")).toHaveLength(1);
    });
});
