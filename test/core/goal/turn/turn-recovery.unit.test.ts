import { describe, expect, it } from "vitest";
import { nextTurnPhase, readbackDecision, turnDecider } from "../../../../src/core/goal/turn/turn-decider.js";
import { fold, given } from "../../../support/decider.js";
import {
  ENVELOPE,
  executed,
  FULL,
  HX,
  hxPrepared,
  ID,
  RECEIPT,
  REV,
  validated,
  WB,
  wbPrepared,
  written,
} from "./turn-fixtures.js";

const upTo = (e: (typeof FULL)[number]) => FULL.slice(0, FULL.indexOf(e) + 1);
const g = (events: typeof FULL) => given(turnDecider, events);
const fail = (code: string, phase: string, detail: string) => ({
  type: "turn_failed",
  data: { identity: ID, failure: { code, phase, detail } },
});

describe("turn: crash recovery by readback", () => {
  it("the rule: committed → reuse, absent → execute, unknown → fail closed", () => {
    expect([readbackDecision("committed"), readbackDecision("absent"), readbackDecision("unknown")]).toEqual([
      "reuse",
      "execute",
      "fail_closed",
    ]);
  });
  it("committed writeback: reuse its payload (one writeback fact)", () => {
    g(upTo(wbPrepared))
      .when({
        type: "resolve_readback",
        identity: ID,
        phase: "durable_writeback",
        effectRef: WB,
        readback: {
          found: "committed",
          payload: { phase: "durable_writeback", commit: "c1", newRevision: "rev_b" },
        },
      })
      .thenEvents([
        {
          type: "turn_effect_readback",
          data: { identity: ID, phase: "durable_writeback", effect_ref: WB, found: "committed" },
        },
        written,
      ]);
  });
  it("absent host effect: execute again", () => {
    const rb = {
      type: "turn_effect_readback" as const,
      data: { identity: ID, phase: "host_execute" as const, effect_ref: HX, found: "absent" as const },
    };
    g(upTo(hxPrepared))
      .when({
        type: "resolve_readback",
        identity: ID,
        phase: "host_execute",
        effectRef: HX,
        readback: { found: "absent" },
      })
      .thenEvents([rb]);
    expect(nextTurnPhase(fold(turnDecider, [...upTo(hxPrepared), rb]))).toEqual({
      kind: "execute",
      phase: "host_execute",
      effectRef: HX,
    });
  });
  it("unknown readback fails closed as blocked_health and nothing else moves", () => {
    const ev = g(upTo(wbPrepared))
      .when({
        type: "resolve_readback",
        identity: ID,
        phase: "durable_writeback",
        effectRef: WB,
        readback: { found: "unknown", reason: "two commits carry the trailer" },
      })
      .events();
    expect(ev).toEqual([
      fail(
        "blocked_health",
        "durable_writeback",
        `readback of ${WB} is unknown: two commits carry the trailer; failing closed`,
      ),
    ]);
    const after = [...upTo(wbPrepared), ...ev];
    expect(nextTurnPhase(fold(turnDecider, after)).kind).toBe("blocked_health");
    given(turnDecider, after)
      .when({
        type: "record_writeback",
        identity: ID,
        effectRef: WB,
        outcome: { kind: "accepted", commit: "c1", newRevision: "rev_b" },
      })
      .thenError(/phase_conflict.*blocked_health/);
  });
  it("blocked: the same unknown again is no new fact; a repaired readback clears the block and settles", () => {
    const unknown = (reason: string) => ({
      type: "resolve_readback" as const,
      identity: ID,
      phase: "durable_writeback" as const,
      effectRef: WB,
      readback: { found: "unknown" as const, reason },
    });
    const blocked = [
      ...upTo(wbPrepared),
      fail(
        "blocked_health",
        "durable_writeback",
        `readback of ${WB} is unknown: two commits; failing closed`,
      ),
    ] as typeof FULL;
    // The block names the effect a fresh readback may resolve once the workspace is repaired.
    expect(nextTurnPhase(fold(turnDecider, blocked))).toEqual({
      kind: "blocked_health",
      reason: `readback of ${WB} is unknown: two commits; failing closed`,
      retry: { phase: "durable_writeback", effectRef: WB },
    });
    g(blocked).when(unknown("two commits")).thenEvents([]);
    // A different unknown is a new fact (the reason changed).
    expect(g(blocked).when(unknown("git log failed")).events()).toHaveLength(1);
    // Repaired: absent → the block is gone and the writeback executes again.
    const absent = {
      type: "turn_effect_readback" as const,
      data: { identity: ID, phase: "durable_writeback" as const, effect_ref: WB, found: "absent" as const },
    };
    g(blocked)
      .when({ ...unknown(""), readback: { found: "absent" } })
      .thenEvents([absent]);
    expect(nextTurnPhase(fold(turnDecider, [...blocked, absent]))).toEqual({
      kind: "execute",
      phase: "durable_writeback",
      effectRef: WB,
    });
    // Repaired: committed → its payload is reused, and the turn goes on to the spend.
    const committed = g(blocked)
      .when({
        ...unknown(""),
        readback: {
          found: "committed",
          payload: { phase: "durable_writeback", commit: "c1", newRevision: "rev_b" },
        },
      })
      .events();
    expect(committed.map((e) => e.type)).toEqual(["turn_effect_readback", "turn_writeback_accepted"]);
    expect(nextTurnPhase(fold(turnDecider, [...blocked, ...committed]))).toEqual({
      kind: "record",
      phase: "quota_spend",
    });
  });
  it("a readback without a prepared effect, or with another phase's payload, is refused", () => {
    g(upTo(validated))
      .when({
        type: "resolve_readback",
        identity: ID,
        phase: "durable_writeback",
        effectRef: WB,
        readback: { found: "absent" },
      })
      .thenError(/receipt_missing.*no prepared/);
    g(upTo(hxPrepared))
      .when({
        type: "resolve_readback",
        identity: ID,
        phase: "host_execute",
        effectRef: HX,
        readback: {
          found: "committed",
          payload: { phase: "durable_writeback", commit: "c", newRevision: "r" },
        },
      })
      .thenError(/identity_mismatch/);
  });
});

describe("turn: a replan obligation", () => {
  const rid = { kind: "replan" as const, obligation_id: "replan_frontier" };
  const rb = { type: "turn_bound" as const, data: { identity: ID, work: rid, base_revision: REV } };
  const hx = { ...hxPrepared };
  const ex = { ...executed, data: { ...executed.data, run_ref: "planner_1" } };
  const plan = { kind: "plan" as const, delta_digest: "delta_1" };
  it("takes a plan result and a typed receipt of the same digest", () => {
    given(turnDecider, [rb, hx, ex])
      .when({ type: "record_typed_result", identity: ID, result: plan })
      .thenEvents([{ type: "turn_typed_result", data: { identity: ID, result: plan } }]);
    const t = { type: "turn_typed_result" as const, data: { identity: ID, result: plan } };
    given(turnDecider, [rb, hx, ex, t])
      .when({ type: "record_validation", identity: ID, receipt: { kind: "typed", digest: "delta_1" } })
      .thenEvents([
        { type: "turn_validated", data: { identity: ID, receipt: { kind: "typed", digest: "delta_1" } } },
      ]);
    given(turnDecider, [rb, hx, ex, t])
      .when({ type: "record_validation", identity: ID, receipt: { kind: "typed", digest: "delta_2" } })
      .thenError(/identity_mismatch/);
    given(turnDecider, [rb, hx, ex, t])
      .when({ type: "record_validation", identity: ID, receipt: RECEIPT })
      .thenError(/identity_mismatch/);
  });
  it("refuses an envelope as the answer to a replan obligation", () => {
    given(turnDecider, [rb, hx, ex])
      .when({ type: "record_typed_result", identity: ID, result: ENVELOPE })
      .thenError(/identity_mismatch.*replan/);
  });
});
