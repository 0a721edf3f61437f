import type { TurnIdentity } from "../../../core/events/goal/turn-events.js";
import type { GoalState } from "../../../core/goal/goal-state-shape.js";
import type { TurnState } from "../../../core/goal/turn/turn-state.js";
import {
  acceptanceRunId,
  executeAcceptanceHost,
  executeAcceptanceWriteback,
  idsOf,
  readbackAcceptanceHost,
  readbackAcceptanceWriteback,
  recordAcceptanceTypedResult,
  recordAcceptanceValidation,
} from "./acceptance-step.js";
import type { TurnKind } from "./turn-kind.js";

/** What an acceptance turn proved: the items whose receipts of this turn failed, if any. */
function summary(s: GoalState, id: TurnIdentity, t: TurnState) {
  const runIds = new Set(idsOf(t).map((a) => acceptanceRunId(id, a)));
  const mine = Object.entries(s.acceptanceReceipts).flatMap(([aid, es]) =>
    es.filter((e) => runIds.has(e.receipt.run_id)).map((e) => ({ aid, status: e.receipt.status })),
  );
  const failing = mine.filter((m) => m.status !== "SUCCESS").map((m) => m.aid);
  return {
    result: failing.length
      ? `acceptance does not hold on ${t.baseRevision?.slice(0, 12)}: ${failing.join(", ")} failed`
      : `acceptance holds on ${t.baseRevision?.slice(0, 12)}`,
    changed: true,
  };
}

/** The acceptance check once the advancement frontier is exhausted (acceptance-step.ts). */
export const acceptanceKind: TurnKind = {
  name: "acceptance",
  select(_ctx, c) {
    const sel = c.agentChannel.selectedAction;
    return sel?.kind === "acceptance"
      ? {
          found: true,
          work: { kind: "acceptance", acceptance_ids: sel.acceptanceIds },
          what: `the acceptance check of ${sel.acceptanceIds.join(", ")}`,
        }
      : { found: false, why: "the contract selects no acceptance check" };
  },
  execute: executeAcceptanceHost,
  readback: (ctx, id, t, phase) =>
    phase === "host_execute" ? readbackAcceptanceHost(ctx, id, t) : readbackAcceptanceWriteback(ctx, id, t),
  typedResult: (ctx, id) => recordAcceptanceTypedResult(ctx, id),
  validate: recordAcceptanceValidation,
  writeback: executeAcceptanceWriteback,
  // Gates alone, no model: one turn, no tokens.
  usage: async () => ({ tokens: 0, cost_usd: 0, turns: 1 }),
  summary,
  todoOf: () => null,
};
