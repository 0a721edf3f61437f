import { describe, expect, it } from "vitest";
import {
  type Check,
  DIMENSIONS,
  type DimensionResult,
  type DimensionState,
  dimensionError,
  dimensionFromChecks,
  EXIT_CODES,
  stateOfChecks,
  summarize,
} from "../../src/selftest/verdict.js";

const ok = (name = "c"): Check => ({ name, ok: true, detail: "" });
const bad = (name = "c"): Check => ({ name, ok: false, detail: "broken" });
const unknown = (name = "c"): Check => ({ name, ok: null, detail: "no provider" });

/** Every dimension of the fixed table, PASS at full score, with `over` applied by id. */
function report(over: Record<string, Partial<DimensionResult>> = {}): DimensionResult[] {
  return DIMENSIONS.map((d) => ({
    id: d.id,
    state: "PASS" as DimensionState,
    score: d.ceiling,
    ceiling: d.ceiling,
    checks: [ok()],
    ...over[d.id],
  }));
}

/** A two-dimension table with ceilings 50 + 50, for exact percentage boundaries. */
const TABLE = [
  { id: "a", ceiling: 50 },
  { id: "b", ceiling: 50 },
];
const dim = (
  id: string,
  state: DimensionState,
  score: number,
  checks: Check[] = [ok()],
): DimensionResult => ({
  id,
  state,
  score,
  ceiling: 50,
  checks,
});

describe("selftest verdict", () => {
  it("the fixed ceilings add up to 100 and the exit codes are 0 / 1 / 2", () => {
    expect(DIMENSIONS.reduce((s, d) => s + d.ceiling, 0)).toBe(100);
    expect(DIMENSIONS.map((d) => d.id)).toHaveLength(6);
    expect(EXIT_CODES).toEqual({ READY: 0, READY_WITH_CAVEATS: 1, NOT_READY: 2 });
  });

  it("READY when every dimension passes at full score", () => {
    const s = summarize(report());
    expect(s).toMatchObject({
      verdict: "READY",
      total: 100,
      ceiling: 100,
      percent: 100,
      exit_code: 0,
      reasons: [],
    });
  });

  it("READY at exactly 90% with every dimension PASS; below 90% only READY_WITH_CAVEATS", () => {
    expect(summarize([dim("a", "PASS", 50), dim("b", "PASS", 40)], TABLE)).toMatchObject({
      verdict: "READY",
      percent: 90,
      exit_code: 0,
    });
    const below = summarize([dim("a", "PASS", 50), dim("b", "PASS", 39)], TABLE);
    expect(below).toMatchObject({ verdict: "READY_WITH_CAVEATS", percent: 89, exit_code: 1 });
    expect(below.reasons.join()).toMatch(/below 90%/);
  });

  it("READY_WITH_CAVEATS when something is NOT_VERIFIABLE, nothing failed and the total is ≥ 70%", () => {
    const s = summarize(report({ live: { state: "NOT_VERIFIABLE", score: 10, checks: [unknown()] } }));
    // NOT_VERIFIABLE scores 0 whatever it claims, and its ceiling stays in the denominator.
    expect(s).toMatchObject({
      verdict: "READY_WITH_CAVEATS",
      total: 90,
      ceiling: 100,
      percent: 90,
      exit_code: 1,
    });
    expect(s.reasons).toContain("live: NOT_VERIFIABLE");
  });

  it("at exactly 70% READY_WITH_CAVEATS, below 70% NOT_READY", () => {
    const at = summarize([dim("a", "PASS", 50), dim("b", "PASS", 20)], TABLE);
    expect(at).toMatchObject({ verdict: "READY_WITH_CAVEATS", percent: 70, exit_code: 1 });
    const under = summarize([dim("a", "PASS", 50), dim("b", "PASS", 19)], TABLE);
    expect(under).toMatchObject({ verdict: "NOT_READY", percent: 69, exit_code: 2 });
    expect(under.reasons.join()).toMatch(/below 70%/);
  });

  it("NOT_VERIFIABLE dimensions stay in the denominator: two unverifiable of six is below 70%", () => {
    const s = summarize(
      report({
        live: { state: "NOT_VERIFIABLE", checks: [unknown()] },
        end_to_end: { state: "NOT_VERIFIABLE", checks: [unknown()] },
        cost: { state: "NOT_VERIFIABLE", checks: [unknown()] },
      }),
    );
    expect(s).toMatchObject({ verdict: "NOT_READY", total: 55, ceiling: 100, exit_code: 2 });
  });

  it("a missing (unexecuted) dimension counts as NOT_VERIFIABLE with score 0, never as absent", () => {
    const s = summarize(report().filter((d) => d.id !== "documentation"));
    expect(s).toMatchObject({ verdict: "READY_WITH_CAVEATS", total: 85, ceiling: 100, exit_code: 1 });
    expect(s.dimensions.find((d) => d.id === "documentation")?.state).toBe("NOT_VERIFIABLE");
    expect(summarize([])).toMatchObject({ verdict: "NOT_READY", total: 0, ceiling: 100, exit_code: 2 });
  });

  it("any FAIL is NOT_READY, even with a high total", () => {
    const s = summarize(report({ documentation: { state: "FAIL", score: 14, checks: [ok(), bad()] } }));
    expect(s).toMatchObject({ verdict: "NOT_READY", total: 99, exit_code: 2 });
  });

  it("a dimension that threw is ERROR with score 0, and ERROR is NOT_READY", () => {
    const e = dimensionError("orchestrator", new Error("boom"));
    expect(e).toMatchObject({ id: "orchestrator", state: "ERROR", score: 0, ceiling: 20, error: "boom" });
    const s = summarize(report({ orchestrator: { ...e, score: 20 } }));
    expect(s).toMatchObject({ verdict: "NOT_READY", total: 80, exit_code: 2 });
    expect(s.reasons).toContain("orchestrator: ERROR");
  });

  it("inconclusive never passes: a claimed PASS with a failed, unverifiable or no check is re-derived", () => {
    const failed = summarize(report({ cost: { state: "PASS", checks: [ok(), bad()] } }));
    expect(failed.dimensions.find((d) => d.id === "cost")?.state).toBe("FAIL");
    expect(failed.verdict).toBe("NOT_READY");
    const unverified = summarize(report({ cost: { state: "PASS", checks: [ok(), unknown()] } }));
    expect(unverified.dimensions.find((d) => d.id === "cost")).toMatchObject({
      state: "NOT_VERIFIABLE",
      score: 0,
    });
    expect(unverified.verdict).toBe("READY_WITH_CAVEATS");
    const empty = summarize(report({ contracts: { state: "PASS", checks: [] } }));
    expect(empty.dimensions.find((d) => d.id === "contracts")?.state).toBe("NOT_VERIFIABLE");
    expect(empty.verdict).not.toBe("READY");
  });

  it("scores are clamped to the fixed ceiling: a dimension cannot inflate its own", () => {
    const s = summarize(report({ live: { score: 1000, ceiling: 1000 } }));
    expect(s).toMatchObject({ total: 100, ceiling: 100 });
    expect(summarize(report({ live: { score: Number.NaN } }))).toMatchObject({ total: 90, verdict: "READY" });
  });

  it("an unknown or duplicated dimension makes the report inconsistent: NOT_READY", () => {
    const extra = summarize([
      ...report(),
      { id: "vibes", state: "PASS", score: 10, ceiling: 10, checks: [ok()] },
    ]);
    expect(extra).toMatchObject({ verdict: "NOT_READY", total: 100, exit_code: 2 });
    const twice = summarize([...report(), ...report().slice(0, 1)]);
    expect(twice.verdict).toBe("NOT_READY");
  });

  it("dimensionFromChecks: PASS scores the ceiling, FAIL the share of passed checks, NOT_VERIFIABLE 0", () => {
    expect(dimensionFromChecks("contracts", [ok(), ok()])).toMatchObject({ state: "PASS", score: 20 });
    expect(dimensionFromChecks("contracts", [ok(), bad(), ok(), ok()])).toMatchObject({
      state: "FAIL",
      score: 15,
    });
    expect(dimensionFromChecks("live", [unknown()])).toMatchObject({ state: "NOT_VERIFIABLE", score: 0 });
    expect(dimensionFromChecks("live", [])).toMatchObject({ state: "NOT_VERIFIABLE", score: 0 });
    expect(stateOfChecks([unknown(), bad()])).toBe("FAIL");
  });
});
