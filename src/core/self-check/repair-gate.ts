import type { Blocker } from "./audit.js";

export type RepairDecision = "allow" | "repair" | "cap_reached";

/** The repair cap when the task does not set `budget.repairs`. */
export const DEFAULT_REPAIR_CAP = 1;

/**
 * The repair gate, decided by loopgate alone: with no blocker the self-check leaves the gate; with
 * blockers one more repair turn runs while the cap allows; after that no further repair turn.
 */
export function decideRepair(input: {
  blockers: readonly Blocker[];
  repairsUsed: number;
  cap: number;
}): RepairDecision {
  if (input.blockers.length === 0) return "allow";
  return input.repairsUsed < input.cap ? "repair" : "cap_reached";
}

const ADVICE: Record<Blocker["code"], string> = {
  missing_self_check: "Run your checks, then call self_check_submit citing the tool-call ids you ran.",
  missing_self_check_plan:
    "Call self_check_plan_submit first: every final artifact, a scratch folder, and expected additions.",
  status_fail: "Your self-check reported fail: fix the cause, re-run the checks, submit again.",
  status_inconclusive: "Your self-check was inconclusive: run a check that decides it, submit again.",
  stale: "You changed the workspace after your self-check: re-run the checks and submit again.",
  uncovered_artifact: "Cite artifact evidence for every declared final artifact.",
  evidence_unknown_call: "Cite only tool-call ids that loopgate recorded.",
  evidence_mismatch: "Cite the command, exit code and output exactly as recorded.",
  cited_call_failed: "A cited check failed: fix it and re-run it before submitting pass.",
  artifact_mismatch: "Artifact evidence must match the file as it is now (existence, size, sha256).",
  unplanned_added_path: "Remove the file or declare it in the plan (final artifact or expected addition).",
  scratch_escape: "Write check output only under the declared scratch folder.",
  reported_side_effects: "Clean up the side effects you reported, then submit again.",
};

/** The one repair prompt: a fixed template over blocker codes and public facts, bounded. */
export function repairPrompt(blockers: readonly Blocker[], repairsUsed: number, cap: number): string {
  const lines = [
    `loopgate's self-check gate found ${blockers.length} blocker(s); this is repair turn ${repairsUsed + 1} of ${cap}.`,
    "It is advisory: only loopgate's own gates decide success.",
  ];
  const seen = new Set<string>();
  for (const b of blockers.slice(0, 20)) {
    lines.push(`- ${b.code}${b.detail ? `: ${b.detail.slice(0, 200)}` : ""}`);
    seen.add(b.code);
  }
  if (blockers.length > 20) lines.push(`- ... and ${blockers.length - 20} more`);
  for (const code of seen) lines.push(`* ${ADVICE[code as Blocker["code"]]}`);
  return lines.join("\n").slice(0, 3900);
}
