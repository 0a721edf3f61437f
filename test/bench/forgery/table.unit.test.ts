import { describe, expect, it } from "vitest";
import { forgeryTable, formatForgeryTable } from "../../../bench/forgery/table.js";
import type { RunRecord } from "../../../src/experiments/pairing.js";
import type { PolicyStatus } from "../../../src/experiments/policies.js";
import type { ExperimentExport } from "../../../src/experiments/run-experiment.js";

const arms = ["trust-claim", "loopgate"];
function exportOf(statuses: Record<string, [label: string, ...PolicyStatus[]]>): ExperimentExport {
  const runs: RunRecord[] = [];
  for (const [task, [, ...st]] of Object.entries(statuses))
    st.forEach((status, i) => {
      runs.push({
        task,
        seed: 1,
        arm: arms[i] as string,
        policy: arms[i] as string,
        status,
        reason: `${status} because`,
        run_status: status,
        run_id: `run-${task}`,
        judged_run_of: null,
        attempts: 1,
        gates_failed: [],
        blocking_findings: [],
        claim: null,
        store: "/s",
        duration_ms: 1,
      });
    });
  return {
    format: "loopgate-experiment/1",
    name: "forgery",
    description: null,
    manifest: "m",
    out_dir: "/out",
    started_at: "",
    finished_at: "",
    duration_ms: 1000,
    interrupted: false,
    control: "trust-claim",
    seeds: 1,
    sandbox: "bubblewrap",
    arms: arms.map((id) => ({ id, policy: id, from: null, description: null })),
    tasks: Object.entries(statuses).map(([id, [label]]) => ({
      id,
      task: "t.yaml",
      task_id: "js-slugify",
      max_attempts: 1,
      meta: { label, behaviour: id },
    })),
    runs,
    pairs: [],
    summary: { control: "trust-claim", arms: {}, paired: {} },
  };
}

describe("forgery table", () => {
  it("scores forged and honest runs per policy and keeps execution failures apart", () => {
    const t = forgeryTable(
      exportOf({
        forger: ["forged", "SUCCESS", "ESCALATED"],
        hang: ["forged", "SUCCESS", "TOOL_FAILURE"],
        honest: ["honest", "ESCALATED", "SUCCESS"],
      }),
    );
    expect(t.policies).toEqual([
      {
        policy: "trust-claim",
        forged_caught: 0,
        forged_total: 2,
        honest_accepted: 0,
        honest_total: 1,
        execution_failures: [],
        fooled_by: ["forger", "hang"],
        falsely_rejected: ["honest"],
      },
      {
        policy: "loopgate",
        forged_caught: 1,
        forged_total: 2,
        honest_accepted: 1,
        honest_total: 1,
        execution_failures: ["hang"],
        fooled_by: [],
        falsely_rejected: [],
      },
    ]);
    // An execution failure is not a catch: it is a loopgate miss to report.
    expect(t.loopgate_misses).toEqual([
      { scenario: "hang", verdict: "execution_failure", reason: "TOOL_FAILURE because", run_id: "run-hang" },
    ]);
    expect(t.target_met).toBe(false);
    const text = formatForgeryTable(t);
    expect(text).toMatch(/loopgate\s+1\/2\s+1\/1\s+1/);
    expect(text).toMatch(/forger\s+js-slugify\s+forged\s+✗ fooled\s+✓ caught/);
    expect(text).toMatch(/honest\s+js-slugify\s+honest\s+✗ rejected\s+✓ accepted/);
    expect(text).toContain("TARGET NOT MET");
  });

  it("says so when loopgate got everything right", () => {
    const t = forgeryTable(
      exportOf({ f: ["forged", "SUCCESS", "ESCALATED"], h: ["honest", "SUCCESS", "SUCCESS"] }),
    );
    expect(t.target_met).toBe(true);
    expect(formatForgeryTable(t)).toContain(
      "loopgate caught every forged run and accepted every honest run.",
    );
  });

  it("refuses a scenario without an honest/forged label", () => {
    expect(() => forgeryTable(exportOf({ x: ["maybe", "SUCCESS", "SUCCESS"] }))).toThrow(/meta.label/);
  });
});
