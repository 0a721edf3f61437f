import { describe, expect, it } from "vitest";
import { projectSelfCheck } from "../../../src/core/agent/self-check-facts.js";
import type { LoopgateEvent } from "../../../src/core/events/loopgate-event.js";
import { guardPublicStrings } from "../../../src/core/self-check/source-guard.js";

const meta = { at: "2026-01-01T00:00:00Z", origin: "runtime" as const };
const plan = {
  finalArtifacts: [{ path: "lib/a.js", purpose: "p", publicReason: "r" }],
  selfCheckScratch: { paths: ["/tmp/s"], cleanup: true },
  workspaceGuardPlan: { commands: [], expectedAdditions: [] },
};
const events = (reason: string): LoopgateEvent[] => [
  {
    id: "1",
    type: "self_check_plan_recorded",
    data: { attempt: 1, call_id: "p1", plan, guard_version: 1 },
    meta,
  },
  {
    id: "2",
    type: "self_check_recorded",
    data: {
      attempt: 1,
      call_id: "s1",
      check: {
        status: "pass",
        publicReason: reason,
        commandEvidence: [],
        artifactEvidence: [{ path: "lib/a.js", kind: "final" }],
        executionHygiene: {
          sandboxRoot: "/tmp/s",
          strategy: "scratch_dir",
          outputPolicy: "scratch_only",
          scratchUsed: false,
          cleanupRan: true,
          workspaceSideEffects: "none",
          remainingSideEffectPaths: [],
        },
      },
      guard_version: 1,
      observation_id: "o",
      evidence_findings: [],
      verified_artifacts: ["lib/a.js"],
      cited_commands: [],
    },
    meta,
  },
  {
    id: "3",
    type: "tool_call_started",
    data: { attempt: 1, turn: 1, call_id: "w", name: "write_file", args: null, mutating: true },
    meta,
  },
];

describe("the projection re-checks recorded self-check entries", () => {
  it("an entry that no longer passes the Source Guard is ignored with a warning", () => {
    const guard = (v: unknown) =>
      guardPublicStrings(v, {
        secrets: ["newly-known-secret"],
        heldoutPaths: [],
        heldoutContent: [],
        nonPublicPaths: [],
      });
    const p = projectSelfCheck(events("it mentions newly-known-secret"), guard, []);
    expect(p.facts.check).toBeNull();
    expect(p.facts.plan).not.toBeNull();
    expect(p.warnings).toEqual(["ignored self-check of s1: no longer passes the Source Guard"]);
  });
  it("a mutating call after the accepted self-check makes it stale", () => {
    const guard = (v: unknown) =>
      guardPublicStrings(v, { secrets: [], heldoutPaths: [], heldoutContent: [], nonPublicPaths: [] });
    const p = projectSelfCheck(events("fine"), guard, []);
    expect(p.facts.stale).toBe(true);
    expect(p.warnings).toEqual([]);
  });
});
