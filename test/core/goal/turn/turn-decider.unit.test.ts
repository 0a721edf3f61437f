import { describe, expect, it } from "vitest";
import { TurnRefusal } from "../../../../src/core/goal/turn/turn-commands.js";
import { nextTurnPhase, turnDecider } from "../../../../src/core/goal/turn/turn-decider.js";
import { fold, given } from "../../../support/decider.js";
import {
  acked,
  applied,
  bound,
  ENVELOPE,
  executed,
  FULL,
  HINT,
  HX,
  hxPrepared,
  ID,
  KEY,
  OTHER,
  RECEIPT,
  REV,
  SA,
  spent,
  typed,
  USAGE,
  validated,
  WB,
  wbPrepared,
  written,
} from "./turn-fixtures.js";

const upTo = (e: (typeof FULL)[number]) => FULL.slice(0, FULL.indexOf(e) + 1);
const g = (events: typeof FULL) => given(turnDecider, events);
const fail = (code: string, phase: string, detail: string, extra = {}) => ({
  type: "turn_failed",
  data: { identity: ID, failure: { code, phase, detail, ...extra } },
});

describe("turn: each phase in order", () => {
  it("bind records the identity, the one todo and the starting revision", () => {
    g([])
      .when({ type: "bind", identity: ID, work: { kind: "todo", todo_id: "todo_parse" }, baseRevision: REV })
      .thenEvents([bound]);
  });
  it("host_execute: prepare, then record", () => {
    g([bound])
      .when({ type: "prepare_effect", identity: ID, phase: "host_execute", effectRef: HX })
      .thenEvents([hxPrepared]);
    g(upTo(hxPrepared))
      .when({ type: "record_host_execute", identity: ID, effectRef: HX, runRef: "run_1" })
      .thenEvents([executed]);
  });
  it("typed_result, validation, writeback, spend, apply, ack", () => {
    g(upTo(executed))
      .when({ type: "record_typed_result", identity: ID, result: ENVELOPE })
      .thenEvents([typed]);
    g(upTo(typed))
      .when({ type: "record_validation", identity: ID, receipt: RECEIPT })
      .thenEvents([validated]);
    g(upTo(validated))
      .when({ type: "prepare_effect", identity: ID, phase: "durable_writeback", effectRef: WB })
      .thenEvents([wbPrepared]);
    g(upTo(wbPrepared))
      .when({
        type: "record_writeback",
        identity: ID,
        effectRef: WB,
        outcome: { kind: "accepted", commit: "c1", newRevision: "rev_b" },
      })
      .thenEvents([written]);
    g(upTo(written))
      .when({
        type: "record_spend",
        identity: ID,
        spendKey: KEY,
        usage: USAGE,
        outcome: { kind: "accepted" },
      })
      .thenEvents([spent]);
    g(upTo(spent))
      .when({ type: "record_scheduler_apply", identity: ID, effectRef: SA, hint: HINT })
      .thenEvents([applied]);
    g(upTo(applied))
      .when({
        type: "record_scheduler_ack",
        identity: ID,
        effectRef: SA,
        outcome: { kind: "ack", mode: "host_updated" },
      })
      .thenEvents([acked]);
  });
  it("nextTurnPhase walks the phases in order and ends done", () => {
    const kinds = FULL.map((_, i) => nextTurnPhase(fold(turnDecider, FULL.slice(0, i))));
    expect(kinds).toEqual([
      { kind: "bind" },
      { kind: "execute", phase: "host_execute", effectRef: HX },
      { kind: "readback", phase: "host_execute", effectRef: HX },
      { kind: "record", phase: "typed_result" },
      { kind: "record", phase: "validation" },
      { kind: "execute", phase: "durable_writeback", effectRef: WB },
      { kind: "readback", phase: "durable_writeback", effectRef: WB },
      { kind: "record", phase: "quota_spend" },
      { kind: "scheduler_apply", effectRef: SA },
      { kind: "scheduler_ack", effectRef: SA },
    ]);
    expect(nextTurnPhase(fold(turnDecider, FULL))).toEqual({ kind: "done" });
  });
});

describe("turn: refusals", () => {
  it("identity_mismatch: a fact of another turn", () => {
    const e = g(upTo(executed))
      .when({ type: "record_typed_result", identity: OTHER, result: ENVELOPE })
      .thenError(/identity_mismatch/, TurnRefusal);
    expect((e as TurnRefusal).failure).toBe("identity_mismatch");
  });
  it("identity_mismatch: re-binding to another todo", () => {
    g([bound])
      .when({ type: "bind", identity: ID, work: { kind: "todo", todo_id: "todo_docs" }, baseRevision: REV })
      .thenError(/identity_mismatch/);
  });
  it("identity_mismatch: a receipt of another run, goal or revision", () => {
    const r = RECEIPT.receipt;
    for (const receipt of [
      { ...r, run_id: "run_9" },
      { ...r, goal_id: "goal_x" },
      { ...r, goal_revision: "rev_z" },
      { ...r, task_id: "docs" },
    ])
      g(upTo(typed))
        .when({ type: "record_validation", identity: ID, receipt: { kind: "run", receipt } })
        .thenError(/identity_mismatch/);
  });
  it("identity_mismatch: a plan result for a todo, a foreign effect_ref, a foreign spend key", () => {
    g(upTo(executed))
      .when({ type: "record_typed_result", identity: ID, result: { kind: "plan", delta_digest: "d" } })
      .thenError(/identity_mismatch/);
    g([bound])
      .when({ type: "prepare_effect", identity: ID, phase: "host_execute", effectRef: "x#host_execute" })
      .thenError(/identity_mismatch/);
    g(upTo(written))
      .when({
        type: "record_spend",
        identity: ID,
        spendKey: "goal_csv/builder/t0",
        usage: USAGE,
        outcome: { kind: "accepted" },
      })
      .thenError(/identity_mismatch/);
  });
  it("identity_mismatch: a scheduler apply under another turn's effect_ref", () => {
    g(upTo(spent))
      .when({
        type: "record_scheduler_apply",
        identity: ID,
        effectRef: "goal_csv/builder/t0#scheduler_apply",
        hint: HINT,
      })
      .thenError(/identity_mismatch/);
  });
  it("receipt_missing: any phase before its predecessor", () => {
    g([])
      .when({ type: "record_typed_result", identity: ID, result: ENVELOPE })
      .thenError(/receipt_missing.*not bound/);
    g([bound])
      .when({ type: "record_host_execute", identity: ID, effectRef: HX, runRef: "run_1" })
      .thenError(/receipt_missing.*not prepared/);
    g([bound])
      .when({ type: "record_typed_result", identity: ID, result: ENVELOPE })
      .thenError(/receipt_missing/);
    g(upTo(executed))
      .when({ type: "record_validation", identity: ID, receipt: RECEIPT })
      .thenError(/receipt_missing/);
    g(upTo(spent))
      .when({
        type: "record_scheduler_ack",
        identity: ID,
        effectRef: SA,
        outcome: { kind: "ack", mode: "host_match" },
      })
      .thenError(/receipt_missing.*scheduler_apply/);
    g(upTo(written))
      .when({ type: "record_scheduler_apply", identity: ID, effectRef: SA, hint: HINT })
      .thenError(/receipt_missing.*quota_spend/);
  });
  it("no writeback without a validation receipt", () => {
    g(upTo(typed))
      .when({ type: "prepare_effect", identity: ID, phase: "durable_writeback", effectRef: WB })
      .thenError(/receipt_missing.*validation receipt/);
    g(upTo(typed))
      .when({
        type: "record_writeback",
        identity: ID,
        effectRef: WB,
        outcome: { kind: "accepted", commit: "c1", newRevision: "rev_b" },
      })
      .thenError(/receipt_missing/);
  });
  it("a missing or non-SUCCESS receipt is recorded as receipt_missing and blocks the writeback", () => {
    g(upTo(typed))
      .when({ type: "record_validation", identity: ID, receipt: null })
      .thenEvents([fail("receipt_missing", "validation", "no validation receipt")] as never);
    const failedRun = { kind: "run" as const, receipt: { ...RECEIPT.receipt, status: "ESCALATED" as const } };
    const ev = g(upTo(typed))
      .when({ type: "record_validation", identity: ID, receipt: failedRun })
      .thenEvents([fail("receipt_missing", "validation", "the run is ESCALATED, not SUCCESS")] as never);
    given(turnDecider, [...upTo(typed), ...ev])
      .when({ type: "prepare_effect", identity: ID, phase: "durable_writeback", effectRef: WB })
      .thenError(/phase_conflict.*receipt_missing/);
  });
  it("no spend without an accepted writeback; a rejected writeback is writeback_rejected", () => {
    g(upTo(wbPrepared))
      .when({
        type: "record_spend",
        identity: ID,
        spendKey: KEY,
        usage: USAGE,
        outcome: { kind: "accepted" },
      })
      .thenError(/receipt_missing.*accepted writeback/);
    const ev = g(upTo(wbPrepared))
      .when({
        type: "record_writeback",
        identity: ID,
        effectRef: WB,
        outcome: { kind: "rejected", reason: "dirty tree" },
      })
      .thenEvents([fail("writeback_rejected", "durable_writeback", "dirty tree")] as never);
    given(turnDecider, [...upTo(wbPrepared), ...ev])
      .when({
        type: "record_spend",
        identity: ID,
        spendKey: KEY,
        usage: USAGE,
        outcome: { kind: "accepted" },
      })
      .thenError(/receipt_missing|phase_conflict/);
  });
  it("needs_rebase when the revision moved; rebase re-validates on the new base, release gives the todo back", () => {
    const ev = g(upTo(wbPrepared))
      .when({
        type: "record_writeback",
        identity: ID,
        effectRef: WB,
        outcome: { kind: "cas_conflict", currentRevision: "rev_c" },
      })
      .thenEvents([
        fail("needs_rebase", "durable_writeback", "the goal revision moved from rev_a to rev_c", {
          current_revision: "rev_c",
        }),
      ] as never);
    const after = [...upTo(wbPrepared), ...ev];
    expect(nextTurnPhase(fold(turnDecider, after))).toEqual({
      kind: "rebase_or_release",
      currentRevision: "rev_c",
    });
    given(turnDecider, after)
      .when({
        type: "record_spend",
        identity: ID,
        spendKey: KEY,
        usage: USAGE,
        outcome: { kind: "accepted" },
      })
      .thenError(/receipt_missing|phase_conflict/);
    const rebased = {
      type: "turn_rebased" as const,
      data: { identity: ID, from_revision: REV, to_revision: "rev_c" },
    };
    given(turnDecider, after)
      .when({ type: "rebase", identity: ID, toRevision: "rev_c" })
      .thenEvents([rebased]);
    const s = fold(turnDecider, [...after, rebased]);
    expect(nextTurnPhase(s)).toEqual({ kind: "record", phase: "typed_result" });
    // the old receipt (rev_a) does not validate on rev_c
    given(turnDecider, [...after, rebased, typed])
      .when({ type: "record_validation", identity: ID, receipt: RECEIPT })
      .thenError(/identity_mismatch.*rev_a/);
    given(turnDecider, after)
      .when({ type: "release", identity: ID, reason: "give back" })
      .thenEvents([{ type: "turn_released", data: { identity: ID, reason: "give back" } }]);
  });
  it("rebase is refused without needs_rebase; release is refused after an accepted writeback", () => {
    g(upTo(typed))
      .when({ type: "rebase", identity: ID, toRevision: "rev_c" })
      .thenError(/phase_conflict.*needs_rebase/);
    g(upTo(written))
      .when({ type: "release", identity: ID, reason: "x" })
      .thenError(/phase_conflict.*settle/);
  });
  it("quota_spend_rejected is recorded and the spend may be retried with the same key", () => {
    const ev = g(upTo(written))
      .when({
        type: "record_spend",
        identity: ID,
        spendKey: KEY,
        usage: USAGE,
        outcome: { kind: "rejected", reason: "store down" },
      })
      .thenEvents([fail("quota_spend_rejected", "quota_spend", "store down")] as never);
    const after = [...upTo(written), ...ev];
    expect(nextTurnPhase(fold(turnDecider, after))).toEqual({ kind: "retry_spend" });
    given(turnDecider, after)
      .when({
        type: "record_spend",
        identity: ID,
        spendKey: KEY,
        usage: USAGE,
        outcome: { kind: "accepted" },
      })
      .thenEvents([spent]);
  });
  it("spend exactly once: a repeat is a no-op, a different spend is refused", () => {
    g(upTo(spent))
      .when({
        type: "record_spend",
        identity: ID,
        spendKey: KEY,
        usage: USAGE,
        outcome: { kind: "accepted" },
      })
      .thenEvents([]);
    g(upTo(spent))
      .when({
        type: "record_spend",
        identity: ID,
        spendKey: KEY,
        usage: { ...USAGE, tokens: 1 },
        outcome: { kind: "accepted" },
      })
      .thenError(/phase_conflict.*once/);
  });
  it("a failed host update is a failure receipt and the apply is retried; no schedule without ACK", () => {
    const failedApply = {
      type: "turn_scheduler_apply_failed" as const,
      data: { identity: ID, effect_ref: SA, reason: "cron busy" },
    };
    g(upTo(applied))
      .when({
        type: "record_scheduler_ack",
        identity: ID,
        effectRef: SA,
        outcome: { kind: "failed", reason: "cron busy" },
      })
      .thenEvents([failedApply]);
    const s = fold(turnDecider, [...upTo(applied), failedApply]);
    expect(s.acked).toBeNull();
    expect(nextTurnPhase(s)).toEqual({ kind: "scheduler_apply", effectRef: SA });
    expect(fold(turnDecider, upTo(applied)).acked).toBeNull();
  });
  it("a released turn takes no more facts", () => {
    const rel = { type: "turn_released" as const, data: { identity: ID, reason: "x" } };
    g([...upTo(typed), rel])
      .when({ type: "record_validation", identity: ID, receipt: RECEIPT })
      .thenError(/phase_conflict.*released/);
  });
});
