import type { Origin } from "../../core/events.js";
import type { AgentEventBody } from "../../core/run-decider.js";
import type { Blocker } from "../../core/self-check/audit.js";
import { repairPrompt } from "../../core/self-check/repair-gate.js";
import type { AgentDeps } from "../agent-loop.js";
import { attemptEvents } from "../agent-state.js";

/**
 * The repair gate where the attempt would end: decided once per model stop and recorded; on `repair`,
 * one templated repair prompt is queued. Returns true when the loop must continue (a repair turn).
 * Resumable: a decision already recorded for this stop is not taken again.
 */
export async function repairTurn(
  d: Pick<AgentDeps, "selfCheck" | "events">,
  attempt: number,
  turn: number,
  rec: (event: AgentEventBody, origin?: Origin) => Promise<void>,
  options: { turnsLeft: boolean } = { turnsLeft: true },
): Promise<boolean> {
  if (!d.selfCheck) return false;
  let events = attemptEvents(d.events(), attempt);
  const stop = events.findLastIndex((e) => e.type === "model_responded");
  let at = events.findLastIndex((e) => e.type === "repair_decided");
  if (at < stop) {
    const decided = await d.selfCheck.gate(events, turn);
    // With the turn budget spent, a repair turn would break that cap: the decision says so instead.
    if (!options.turnsLeft && decided.data.decision === "repair")
      decided.data = {
        ...decided.data,
        decision: "cap_reached",
        warnings: [...decided.data.warnings, "the turn budget is spent, so no repair turn can run"].slice(
          0,
          50,
        ),
      };
    await rec(decided);
    events = attemptEvents(d.events(), attempt);
    at = events.length - 1;
  }
  const decided = events[at];
  if (decided?.type !== "repair_decided" || decided.data.decision !== "repair") return false;
  if (events.slice(at + 1).some((e) => e.type === "continuation_queued")) return false;
  const text = repairPrompt(decided.data.blockers as Blocker[], decided.data.repairs_used, decided.data.cap);
  await rec({ type: "continuation_queued", data: { attempt, turn, text } }, "continuation");
  return true;
}
