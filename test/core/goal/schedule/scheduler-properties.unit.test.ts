import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { interactionContract } from "../../../../src/core/goal/contract.js";
import {
  backoffOf,
  type ScheduleView,
  type StreamEvent,
  turnHistory,
} from "../../../../src/core/goal/schedule/backoff-history.js";
import {
  effectiveWake,
  type ScheduledOutcome,
  scheduleStep,
} from "../../../../src/core/goal/schedule/schedule-step.js";
import {
  contractIdentity,
  contractView,
  maxBackoffStep,
  type WakeUp,
} from "../../../../src/core/goal/schedule/scheduler.js";
import { run, step } from "../goal-commands.arbitrary.js";
import { adv, approved, created, gate, spec } from "../goal-fixtures.js";

const RUNS = { numRuns: 300 };
const P = { baseSeconds: 30, factor: 2, maxSeconds: 500 };
const NOW = "2026-12-02T00:00:00.000Z";

// A goal stream of turns on two todos, with a gate decision and a person's write mixed in.
const goal = spec([
  adv("todo_aaa"),
  adv("todo_bbb"),
  adv("todo_ccc", { required_decision_scopes: ["pub"] }),
  gate("todo_gate", "pub"),
]);
type Piece =
  | { kind: "turn"; todo: "todo_aaa" | "todo_bbb" | "todo_ccc"; written: boolean }
  | { kind: "approve" }
  | { kind: "person" };
const piece: fc.Arbitrary<Piece> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant("turn" as const),
      todo: fc.constantFrom("todo_aaa" as const, "todo_bbb" as const, "todo_ccc" as const),
      written: fc.boolean(),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "approve" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "person" as const }) },
);

function stream(pieces: readonly Piece[]): StreamEvent[] {
  let rev = 0;
  const at = "2026-12-01T10:00:00.000Z";
  const ev = (e: { type: string; data: unknown }, origin: string): StreamEvent => ({
    ...e,
    revision: rev++,
    meta: { at, origin },
  });
  const out = created(goal).map((e) => ev(e, "operator"));
  pieces.forEach((p, i) => {
    if (p.kind === "approve") out.push(ev(approved("todo_gate"), "runtime"));
    else if (p.kind === "person")
      out.push(ev({ type: "goal_activation_changed", data: { activation: "active", note: "" } }, "operator"));
    else {
      const identity = { goal_id: "goal_csv", agent_id: "agent_main", turn_instance_id: `t${i}` };
      out.push(
        ev(
          {
            type: "turn_bound",
            data: { identity, work: { kind: "todo", todo_id: p.todo }, base_revision: "rev0000" },
          },
          "runtime",
        ),
      );
      if (p.written)
        out.push(
          ev(
            {
              type: "turn_writeback_accepted",
              data: { identity, effect_ref: "e", commit: "c", new_revision: "r" },
            },
            "runtime",
          ),
        );
      out.push(ev({ type: "turn_released", data: { identity, reason: "done" } }, "runtime"));
    }
  });
  return out;
}

describe("property: backoff never grows across an identity change", () => {
  it("over recorded turn streams: a turn whose identity or reset token differs from the one before starts at step 0; growth is one step at most, bounded", () => {
    let changes = 0;
    let grown = 0;
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 30 }), (pieces) => {
        const turns = turnHistory(stream(pieces));
        let prevStep = -1;
        turns.forEach((t, k) => {
          const s = backoffOf(turns.slice(0, k + 1), P)?.step ?? -1;
          const before = turns[k - 1];
          if (before && (before.identity !== t.identity || before.resetToken !== t.resetToken)) {
            changes++;
            expect(s).toBe(0);
          }
          if (t.changed) expect(s).toBe(0);
          if (s > 0) grown++;
          expect(s).toBeLessThanOrEqual(prevStep + 1);
          expect(s).toBeLessThanOrEqual(maxBackoffStep(P));
          prevStep = s;
        });
      }),
      RUNS,
    );
    // The generator reaches both cases, so the property is not vacuous.
    expect(changes).toBeGreaterThan(50);
    expect(grown).toBeGreaterThan(50);
  });

  it("a backoff earned on another identity never delays a wake-up", () => {
    const views = fc.record({
      runtimeState: fc.constantFrom(
        "eligible" as const,
        "focus_wait" as const,
        "waiting" as const,
        "throttled" as const,
      ),
      selectedTodo: fc.constantFrom(null, "todo_aaa", "todo_bbb"),
      gateIds: fc.subarray(["g1", "g2"]),
      notBefore: fc.constant(null),
      terminal: fc.boolean(),
    });
    fc.assert(
      fc.property(views, views, fc.nat(12), fc.integer({ min: -600, max: 6000 }), (now, then, s, dt) => {
        const identity = contractIdentity(now);
        const other = contractIdentity(then);
        fc.pre(identity !== other);
        const sv: ScheduleView = {
          view: now,
          identity,
          backoff: { identity: other, resetToken: null, step: s },
        };
        const wake: WakeUp = {
          action: "wait_until",
          at: new Date(Date.parse(NOW) + dt * 1000).toISOString(),
          why: "w",
        };
        expect(effectiveWake(wake, sv, new Date(NOW), P)).toEqual(wake);
        const runNow: WakeUp = { action: "run_now", at: NOW, why: "r" };
        expect(effectiveWake(runNow, sv, new Date(NOW), P)).toEqual(runNow);
      }),
      RUNS,
    );
  });
});

const anyWake: fc.Arbitrary<WakeUp> = fc.record({
  action: fc.constantFrom(
    "run_now" as const,
    "wait_until" as const,
    "wait_state_change" as const,
    "ask_user" as const,
    "repair_health" as const,
    "stop" as const,
  ),
  at: fc.option(
    fc.integer({ min: -3600, max: 3600 }).map((s) => new Date(Date.parse(NOW) + s * 1000).toISOString()),
  ),
  why: fc.constant("tick"),
});
const anyOutcome = (wake: WakeUp): fc.Arbitrary<ScheduledOutcome> =>
  fc.oneof(
    fc.record({
      kind: fc.constant("advanced" as const),
      changed: fc.boolean(),
      result: fc.constant("SUCCESS"),
      wake: fc.constant(wake),
    }),
    fc.record({
      kind: fc.constant("idle" as const),
      reason: fc.constant("nothing due"),
      wake: fc.constant(wake),
    }),
    fc.record({
      kind: fc.constant("failed" as const),
      code: fc.constantFrom("run_failed", "needs_rebase", "receipt_missing"),
      detail: fc.constant("x"),
      wake: fc.constant(wake),
    }),
    fc.record({
      kind: fc.constant("stopped" as const),
      reason: fc.constant("stopped"),
      wake: fc.constant(wake),
    }),
  );

describe("property: scheduling never makes a paused or blocked goal eligible", () => {
  it("for every reachable goal state that is paused or blocked_health, no wake-up, backoff or outcome leads to a tick", () => {
    let seen = 0;
    fc.assert(
      fc.property(
        fc.array(step, { maxLength: 40 }),
        fc.boolean(),
        anyWake,
        fc.option(fc.nat(10)),
        fc.constantFrom("run" as const, "once" as const, "until_idle" as const),
        (steps, sick, wake0, bstep, mode) => {
          const { state } = run(steps);
          const health = sick ? [{ code: "workspace_dirty", detail: "uncommitted files" }] : [];
          const contract = interactionContract(state, { now: new Date(NOW), health });
          const view = contractView(contract);
          if (view.runtimeState !== "paused" && view.runtimeState !== "blocked_health") return;
          seen++;
          const identity = contractIdentity(view);
          const sv: ScheduleView = {
            view,
            identity,
            backoff: bstep === null ? null : { identity, resetToken: null, step: bstep },
          };
          const frozen = JSON.stringify(state);
          const wake = effectiveWake(wake0, sv, new Date(NOW), P);
          expect(["run_now", "wait_until"]).not.toContain(wake.action);
          fc.assert(
            fc.property(anyOutcome(wake0), (o) => {
              const next = scheduleStep(o, wake, { now: new Date(NOW), mode, atBound: false, policy: P });
              expect(next.kind).toBe("exit");
            }),
            { numRuns: 10 },
          );
          // Reading the schedule changed nothing: the same state, nothing spent.
          expect(JSON.stringify(state)).toBe(frozen);
        },
      ),
      RUNS,
    );
    expect(seen).toBeGreaterThan(30);
  });
});
