import { createHash } from "node:crypto";
import type { ChangePlan } from "./gate-change-plan.js";
import { comparePaths } from "./observation.js";

/** Names the digest's form; a change of what it covers changes this tag, so two forms never compare equal. */
const FORM = "loopgate gate-change plan v1";

/**
 * What the gates of an attempt saw of the builder's work, as one sha256: every carried entry (path, type,
 * permission bits, content hash, link target) and every pristine path dropped, in path order, so the order
 * a plan lists them in never matters. Recorded on each gate's `gate_run_finished` (`change_plan_digest`);
 * a goal's writeback recomputes its plan and must find this same digest, or it writes nothing: the verdict rested
 * on what the gates saw (docs/architecture.md, "Invariants", 5).
 */
export function changePlanDigest(plan: Pick<ChangePlan, "carry" | "drop">): string {
  const h = createHash("sha256").update(`${FORM}\n`);
  const carry = [...plan.carry].sort((a, b) => comparePaths(a.path, b.path));
  for (const e of carry)
    h.update(`${JSON.stringify(["carry", e.path, e.type, e.mode, e.hash, e.target ?? null])}\n`);
  for (const p of [...plan.drop].sort(comparePaths)) h.update(`${JSON.stringify(["drop", p])}\n`);
  return h.digest("hex");
}

/**
 * Why a writeback may not write the plan it recomputed: a gate of the accepted attempt recorded another
 * digest. Null when every recorded digest equals `computed`, or when none was recorded (a run from before
 * the digest was recorded keeps the old behaviour).
 */
export function changePlanMismatch(
  recorded: readonly { gate_id: string; change_plan_digest?: string | undefined }[],
  computed: string,
): string | null {
  const other = recorded.find((g) => g.change_plan_digest !== undefined && g.change_plan_digest !== computed);
  if (!other) return null;
  return `change plan mismatch: gate ${other.gate_id} ran on the change plan ${other.change_plan_digest}, the writeback recomputed ${computed}; only what the gates saw is written back`;
}
