import { createHash } from "node:crypto";
import type { GoalEventBody } from "../../../core/events/goal/goal-events.js";
import { effectRef, type TurnIdentity } from "../../../core/events/goal/turn-events.js";
import { decide } from "../../../core/goal/goal-decider.js";
import type { GoalState } from "../../../core/goal/goal-state-shape.js";
import type { TurnState } from "../../../core/goal/turn/turn-state.js";
import { DomainError } from "../../../core/kernel/errors.js";
import { acceptanceTask } from "../acceptance-run.js";
import { readbackRun } from "../repo/readback.js";
import { type RunReceipt, receiptOfRun } from "../run-receipts.js";
import { contractNow } from "./contract-now.js";
import { type OperationFound, readbackGoalOperation, writeGoalOperation } from "./operation-writeback.js";
import { repoOf, type TickCtx, turnDecision, turnRunId } from "./tick-context.js";
import { digestOf, readbackKeptEffect } from "./turn-effects.js";

/**
 * The acceptance turn (closure): once the advancement frontier is exhausted and acceptance
 * is not proved on the current revision, a governed turn proves it. host_execute = every acceptance
 * item's gates fresh on the turn's revision (no builder, one run per item under a deterministic run id;
 * a run left unfinished is resumed, a finished one reused); typed_result = the digest of the runs'
 * receipts; validation = every receipt is loopgate's own, for this goal and revision; durable_writeback
 * = the receipts recorded in ONE goal append under the writeback effect_ref (readback: the turn's run ids
 * among the recorded receipts). A failing item leaves the goal's replan obligation, as `goal accept` does.
 */
interface AcceptanceEffect {
  runs: { acceptance_id: string; run_id: string }[];
}

/** The acceptance items a turn proves. */
export const idsOf = (t: TurnState) => (t.work?.kind === "acceptance" ? t.work.acceptance_ids : []);

/** The run id of one acceptance item's gates in a turn (readback finds the run by it). */
export function acceptanceRunId(id: TurnIdentity, acceptanceId: string): string {
  const h = createHash("sha256").update(acceptanceId).digest("hex").slice(0, 8);
  return `${turnRunId(id)}-a${h}`;
}

/** Runs (or resumes, or reuses) every item's gates, keeps the run list, records host_execute. */
async function runAll(ctx: TickCtx, id: TurnIdentity, t: TurnState): Promise<void> {
  const base = t.baseRevision ?? "";
  const tree = await repoOf(ctx).tree(id.goal_id, base);
  const runs: AcceptanceEffect["runs"] = [];
  for (const aid of idsOf(t)) {
    const item = ctx.j.state.acceptance.find((a) => a.id === aid);
    if (!item) throw new DomainError(`turn ${id.turn_instance_id}: ${aid} is no acceptance item of the goal`);
    const runId = acceptanceRunId(id, aid);
    const found = await readbackRun(ctx.deps.store, runId);
    if (found.found === "unknown") throw new DomainError(`blocked_health: ${found.reason}`);
    if (found.found !== "finished") {
      ctx.progress({
        phase: "host_execute",
        detail: `${found.found === "started" ? "resuming" : "running"} acceptance ${aid} as run ${runId}`,
      });
      await ctx.deps.runHost({
        runId,
        loaded: await acceptanceTask(ctx.deps.store, ctx.deps.localDir, id.goal_id, item, tree),
        goal: { id: id.goal_id, revision: base },
        resume: found.found === "started",
        gatesOnly: true,
      });
    }
    runs.push({ acceptance_id: aid, run_id: runId });
  }
  const runRef = await repoOf(ctx).saveEffect(id, { runs } satisfies AcceptanceEffect);
  await ctx.j.append(
    turnDecision({
      type: "record_host_execute",
      identity: id,
      effectRef: effectRef(id, "host_execute"),
      runRef: runRef,
    }),
  );
}

export async function executeAcceptanceHost(ctx: TickCtx, id: TurnIdentity, t: TurnState): Promise<void> {
  const { contract: c } = await contractNow(ctx);
  const sel = c.agentChannel.selectedAction;
  if (c.runtimeState !== "eligible" || sel?.kind !== "acceptance") {
    await ctx.j.append(
      turnDecision({
        type: "release",
        identity: id,
        reason: `nothing ran: the contract no longer selects acceptance (${c.runtimeState}: ${c.reason})`,
      }),
    );
    return;
  }
  await ctx.j.append(
    turnDecision({
      type: "prepare_effect",
      identity: id,
      phase: "host_execute",
      effectRef: effectRef(id, "host_execute"),
    }),
  );
  await runAll(ctx, id, t);
}

/** host_execute prepared, not settled: the kept run list → reuse; else the runs by id (reused, resumed or run). */
export const readbackAcceptanceHost = (ctx: TickCtx, id: TurnIdentity, t: TurnState) =>
  readbackKeptEffect(ctx, id, "acceptance runs", () => runAll(ctx, id, t));

/** The receipts of the turn's runs, from loopgate's own record of each. */
async function receiptsOf(ctx: TickCtx, id: TurnIdentity): Promise<{ id: string; receipt: RunReceipt }[]> {
  const kept = await repoOf(ctx).loadEffect<AcceptanceEffect>(id);
  if (!kept) throw new DomainError(`turn ${id.turn_instance_id}: the acceptance run list is gone`);
  const out: { id: string; receipt: RunReceipt }[] = [];
  for (const r of kept.runs)
    out.push({
      id: r.acceptance_id,
      receipt: (await receiptOfRun(ctx.deps.store, ctx.deps.localDir, r.run_id)).receipt,
    });
  return out;
}

const verdictsOf = (receipts: { id: string; receipt: RunReceipt }[]) =>
  receipts.map((r) => `${r.id} ${r.receipt.status}`).join(", ");

/** typed_result: the digest of the runs' receipts. */
export async function recordAcceptanceTypedResult(ctx: TickCtx, id: TurnIdentity): Promise<void> {
  const receipts = await receiptsOf(ctx, id);
  ctx.progress({ phase: "typed_result", detail: verdictsOf(receipts) });
  await ctx.j.append(
    turnDecision({
      type: "record_typed_result",
      identity: id,
      result: { kind: "observation", result_hash: digestOf(receipts) },
    }),
  );
}

/** validation: every receipt is loopgate's own, for this goal and the turn's revision; else none. */
export async function recordAcceptanceValidation(
  ctx: TickCtx,
  id: TurnIdentity,
  t: TurnState,
): Promise<void> {
  const receipts = await receiptsOf(ctx, id);
  const foreign = receipts.find(
    (r) => r.receipt.goal_id !== id.goal_id || r.receipt.goal_revision !== t.baseRevision,
  );
  ctx.progress({
    phase: "validation",
    detail: foreign
      ? `no receipt: run ${foreign.receipt.run_id} is not on the turn's revision`
      : `receipts: ${verdictsOf(receipts)}`,
  });
  await ctx.j.append(
    turnDecision({
      type: "record_validation",
      identity: id,
      receipt: foreign ? null : { kind: "typed", digest: digestOf(receipts) },
    }),
  );
}

/** The goal events recording the receipts (the decider checks each against its acceptance item). */
function receiptEvents(s: GoalState, receipts: { id: string; receipt: RunReceipt }[]): GoalEventBody[] {
  return receipts.flatMap((r) =>
    decide({ type: "record_acceptance", acceptanceId: r.id, receipt: r.receipt }, s),
  );
}

export async function executeAcceptanceWriteback(
  ctx: TickCtx,
  id: TurnIdentity,
  t: TurnState,
): Promise<void> {
  const base = t.baseRevision ?? "";
  const receipts = await receiptsOf(ctx, id);
  await writeGoalOperation(ctx, id, t, {
    noun: "receipts",
    events: (s) => receiptEvents(s, receipts),
    detail: (types) =>
      `${types ? types.split(", ").length : 0} acceptance receipt(s) recorded on ${base.slice(0, 12)}`,
  });
}

/** How many of the turn's runs have their receipt recorded on the goal. */
function recorded(s: GoalState, id: TurnIdentity, t: TurnState): number {
  const runIds = new Set(idsOf(t).map((a) => acceptanceRunId(id, a)));
  const seen = new Set(
    Object.values(s.acceptanceReceipts)
      .flat()
      .map((e) => e.receipt.run_id)
      .filter((r) => runIds.has(r)),
  );
  return seen.size;
}

/** Readback: all the turn's receipts recorded → committed; none → absent; some → unknown (fail closed). */
export const readbackAcceptanceWriteback = (ctx: TickCtx, id: TurnIdentity, t: TurnState) =>
  readbackGoalOperation(ctx, id, t, (s, ref) => {
    const n = recorded(s, id, t);
    const all = idsOf(t).length;
    const found: OperationFound =
      n === all
        ? { found: "committed" }
        : n === 0
          ? { found: "absent" }
          : { found: "unknown", reason: `only ${n} of the turn's ${all} acceptance receipts are recorded` };
    return { found, detail: `acceptance receipts of ${ref}: ${n} of ${all} recorded` };
  });
