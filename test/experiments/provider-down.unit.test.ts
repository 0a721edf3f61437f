// An experiment run whose model provider was down is infrastructure (TOOL_FAILURE, left out of the
// pairs), never a graded failure of the arm: under every policy, and in the summary's counts.
import { describe, expect, it } from "vitest";
import { providerDown } from "../../src/builders/claude/claude-provider-error.js";
import type { LoopgateEvent } from "../../src/core/events/loopgate-event.js";
import type { Envelope } from "../../src/core/run/envelope.js";
import { POLICIES } from "../../src/experiments/manifest.js";
import { pairedOutcome, pairRuns, type RunRecord, summarize } from "../../src/experiments/pairing.js";
import { judgeRun } from "../../src/experiments/policies.js";

const meta = { at: "2026-12-03T18:00:00.000Z", origin: "runtime" as const };
const ev = (type: string, data: Record<string, unknown>) => ({ id: type, type, data, meta }) as LoopgateEvent;
const said = "API Error: Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)";
const reason = providerDown("http://127.0.0.1:9", said);

// What the log of such a run holds: the builder's pass, failed, with the provider's error as its output.
const events = [
  ev("builder_finished", {
    attempt: 1,
    exit_code: 1,
    signal: null,
    timed_out: false,
    duration_ms: 4000,
    output_excerpt: said,
  }),
  ev("claim_recorded", { attempt: 1, origin: "model", text: said, hedged: false }),
];
const envelope = {
  run_id: "r",
  task_id: "t",
  status: "TOOL_FAILURE",
  reason,
  attempts: 1,
  gates: [],
  findings: [],
  claims: [],
  sandbox: "bubblewrap",
  audit: {
    self_correction_count: 0,
    latency_ms: 0,
    hedge_warning: false,
    cost: null,
    tokens: null,
    event_count: 2,
  },
} as unknown as Envelope;

describe("a provider that was down, in an experiment", () => {
  it("is TOOL_FAILURE under every policy, with the provider named", () => {
    for (const policy of POLICIES)
      expect(judgeRun(policy, envelope, events, ["visible", "heldout"]), policy).toEqual({
        status: "TOOL_FAILURE",
        reason,
      });
  });

  it("leaves the pair unpaired and is counted apart from the graded failures", () => {
    expect(pairedOutcome("ESCALATED", "TOOL_FAILURE")).toBe("unpaired");
    expect(pairedOutcome("TOOL_FAILURE", "SUCCESS")).toBe("unpaired");
    const record = (arm: string, status: "ESCALATED" | "TOOL_FAILURE") =>
      ({ task: "t", seed: 1, arm, policy: "loopgate", status, reason: "" }) as RunRecord;
    const runs = [record("control", "ESCALATED"), record("loopgate", "TOOL_FAILURE")];
    const pairs = pairRuns(runs, ["control", "loopgate"], "control", ["t"], 1);
    const summary = summarize(runs, pairs, ["control", "loopgate"], "control");
    expect(summary.paired.loopgate).toMatchObject({ pairs: 1, unpaired: 1, regressed: 0 });
    expect(summary.arms.loopgate).toMatchObject({ runs: 1, ESCALATED: 0, TOOL_FAILURE: 1 });
    expect(summary.arms.control).toMatchObject({ runs: 1, ESCALATED: 1, TOOL_FAILURE: 0 });
  });
});
