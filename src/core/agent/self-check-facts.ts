import type { LoopgateEvent } from "../events/loopgate-event.js";
import type { EvidenceFinding, SelfCheckFacts } from "../self-check/audit.js";
import type { SourceGuardResult } from "../self-check/source-guard.js";

/**
 * Projects one attempt's events into the self-check facts. Every recorded plan and self-check is
 * re-checked by the Source Guard; one that no longer passes is ignored, with a warning.
 */
export function projectSelfCheck(
  attemptEvents: readonly LoopgateEvent[],
  guard: (value: unknown) => SourceGuardResult,
  addedPaths: readonly string[],
): { facts: SelfCheckFacts; warnings: string[]; repairsUsed: number } {
  const warnings: string[] = [];
  let plan: SelfCheckFacts["plan"] = null;
  let check: SelfCheckFacts["check"] = null;
  let checkAt = -1;
  let repairsUsed = 0;
  attemptEvents.forEach((e, i) => {
    if (e.type === "self_check_plan_recorded") {
      const g = guard(e.data.plan);
      if (g.status === "accepted") plan = e.data.plan;
      else warnings.push(`ignored plan of ${e.data.call_id}: no longer passes the Source Guard`);
    } else if (e.type === "self_check_recorded") {
      const g = guard(e.data.check);
      if (g.status === "accepted") {
        check = {
          submission: e.data.check,
          findings: e.data.evidence_findings as EvidenceFinding[],
          verifiedArtifacts: e.data.verified_artifacts,
          citedCommands: e.data.cited_commands,
        };
        checkAt = i;
      } else warnings.push(`ignored self-check of ${e.data.call_id}: no longer passes the Source Guard`);
    } else if (e.type === "repair_decided" && e.data.decision === "repair") repairsUsed++;
  });
  const stale =
    checkAt >= 0 &&
    attemptEvents.slice(checkAt + 1).some((e) => e.type === "tool_call_started" && e.data.mutating);
  return { facts: { plan, check, stale, addedPaths }, warnings, repairsUsed };
}
