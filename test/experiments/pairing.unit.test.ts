import { describe, expect, it } from "vitest";
import { pairedOutcome, pairRuns, type RunRecord, summarize } from "../../src/experiments/pairing.js";
import type { PolicyStatus } from "../../src/experiments/policies.js";

function run(task: string, seed: number, arm: string, status: PolicyStatus): RunRecord {
  return {
    task,
    seed,
    arm,
    policy: "loopgate",
    status,
    reason: "",
    run_status: status,
    run_id: `${task}-${seed}-${arm}`,
    judged_run_of: null,
    attempts: 1,
    gates_failed: [],
    blocking_findings: [],
    claim: null,
    store: "/tmp/x",
    duration_ms: 1,
  };
}

describe("paired outcomes", () => {
  it("compares success against the control and keeps execution failures unpaired", () => {
    expect(pairedOutcome("ESCALATED", "SUCCESS")).toBe("improved");
    expect(pairedOutcome("SUCCESS", "ESCALATED")).toBe("regressed");
    expect(pairedOutcome("SUCCESS", "SUCCESS")).toBe("tied");
    expect(pairedOutcome("ESCALATED", "ESCALATED")).toBe("tied");
    // An execution failure is not a graded failure: it says nothing about the treatment.
    expect(pairedOutcome("TOOL_FAILURE", "SUCCESS")).toBe("unpaired");
    expect(pairedOutcome("SUCCESS", "TOOL_FAILURE")).toBe("unpaired");
    expect(pairedOutcome("ESCALATED", "TOOL_FAILURE")).toBe("unpaired");
    expect(pairedOutcome(null, "SUCCESS")).toBe("unpaired");
    expect(pairedOutcome("SUCCESS", undefined)).toBe("unpaired");
  });

  it("pairs by (task, seed) in the given order and counts per arm with execution failures apart", () => {
    const records = [
      run("b", 1, "control", "ESCALATED"),
      run("a", 1, "control", "ESCALATED"),
      run("a", 1, "treat", "SUCCESS"),
      run("a", 2, "control", "SUCCESS"),
      run("a", 2, "treat", "ESCALATED"),
      run("b", 1, "treat", "TOOL_FAILURE"),
      run("b", 2, "control", "SUCCESS"),
      run("b", 2, "treat", "SUCCESS"),
      // (a, 3) has no treatment run at all: the experiment was interrupted.
      run("a", 3, "control", "SUCCESS"),
    ];
    const pairs = pairRuns(records, ["control", "treat"], "control", ["a", "b"], 3);
    expect(pairs.map((p) => `${p.task}${p.seed}:${p.outcome.treat}`)).toEqual([
      "a1:improved",
      "a2:regressed",
      "a3:unpaired",
      "b1:unpaired",
      "b2:tied",
      "b3:unpaired",
    ]);
    expect(pairs[3]?.status).toEqual({ control: "ESCALATED", treat: "TOOL_FAILURE" });
    expect(pairs[5]?.status).toEqual({ control: null, treat: null });
    const s = summarize(records, pairs, ["control", "treat"], "control");
    expect(s.arms.control).toEqual({ runs: 5, SUCCESS: 3, ESCALATED: 2, TOOL_FAILURE: 0 });
    expect(s.arms.treat).toEqual({ runs: 4, SUCCESS: 2, ESCALATED: 1, TOOL_FAILURE: 1 });
    expect(s.paired).toEqual({ treat: { pairs: 6, improved: 1, regressed: 1, tied: 1, unpaired: 3 } });
    expect(s.paired.control).toBeUndefined();
  });

  it("pairs every treatment against the same control", () => {
    const records = [
      run("a", 1, "c", "ESCALATED"),
      run("a", 1, "t1", "SUCCESS"),
      run("a", 1, "t2", "ESCALATED"),
    ];
    const [pair] = pairRuns(records, ["c", "t1", "t2"], "c", ["a"], 1);
    expect(pair?.outcome).toEqual({ t1: "improved", t2: "tied" });
  });
});
