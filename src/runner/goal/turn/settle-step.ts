import type { GoalEventBody } from "../../../core/events/goal/goal-events.js";
import { effectRef, spendKey, type TurnIdentity, type Usage } from "../../../core/events/goal/turn-events.js";
import { completionRefusal } from "../../../core/goal/completion.js";
import { decide } from "../../../core/goal/goal-decider.js";
import type { GoalState } from "../../../core/goal/goal-state-shape.js";
import type { Readback } from "../../../core/goal/turn/turn-commands.js";
import type { TurnState } from "../../../core/goal/turn/turn-state.js";
import { acceptedChange } from "../repo/deliverables.js";
import { runLog } from "./finished-run.js";
import { turnTask } from "./host-step.js";
import { repoOf, type TickCtx, turnDecision, turnOf } from "./tick-context.js";

const todoOf = (t: TurnState) => (t.work?.kind === "todo" ? t.work.todo_id : "");

/** The todo's completion with its evidence and the writeback revision: goal events of the same append. */
function completion(s: GoalState, id: TurnIdentity, commit: string): GoalEventBody[] {
  const t = turnOf(s, id);
  const receipt = t.receipt?.kind === "run" ? t.receipt.receipt : undefined;
  return decide(
    {
      type: "complete_todo",
      todoId: todoOf(t),
      ...(receipt ? { receipt } : {}),
      writeback: { revision: commit, reason: `turn ${spendKey(id)}: ${todoOf(t)}`, turnId: spendKey(id) },
    },
    s,
  );
}

/**
 * durable_writeback: the goal decider must accept the completion first (nothing is committed that the
 * goal would refuse); then the journaled prepare, the git commit (compare-and-swap on the base), and
 * the accepted writeback with the todo's completion and the new revision in ONE goal append.
 */
export async function executeWriteback(ctx: TickCtx, id: TurnIdentity, t: TurnState): Promise<void> {
  const ref = effectRef(id, "durable_writeback");
  const base = t.baseRevision ?? "";
  const turn = turnOf(ctx.j.state, id);
  const refusal = completionRefusal(
    ctx.j.state,
    todoOf(turn),
    turn.receipt?.kind === "run" ? turn.receipt.receipt : undefined,
  );
  await ctx.j.append(
    turnDecision({ type: "prepare_effect", identity: id, phase: "durable_writeback", effectRef: ref }),
  );
  const outcome = refusal
    ? { kind: "rejected" as const, reason: `the goal refuses the completion: ${refusal}` }
    : await repoOf(ctx).writeBack({
        goalId: id.goal_id,
        base,
        recorded: ctx.j.state.revision,
        change: await acceptedChange(
          ctx.deps.store,
          t.host?.runRef ?? "",
          await turnTask(ctx, t),
          ctx.deps.localDir,
          (await runLog(ctx, t.host?.runRef ?? "")).events,
        ),
        turnKey: spendKey(id),
        subject: `loopgate: ${todoOf(t)} (turn ${id.turn_instance_id}, run ${t.host?.runRef})`,
        ...(ctx.deps.atWritebackPoint ? { atPoint: ctx.deps.atWritebackPoint } : {}),
      });
  ctx.progress({
    phase: "durable_writeback",
    detail:
      outcome.kind === "accepted"
        ? `commit ${outcome.commit.slice(0, 12)} on ${base.slice(0, 12)}`
        : outcome.kind === "cas_conflict"
          ? `needs_rebase: the workspace moved to ${outcome.currentRevision.slice(0, 12)}`
          : `rejected: ${outcome.reason}`,
  });
  await ctx.j.append((s) => {
    const turn = turnDecision({ type: "record_writeback", identity: id, effectRef: ref, outcome })(s);
    return outcome.kind === "accepted" ? [...turn, ...completion(s, id, outcome.commit)] : turn;
  });
}

/** A prepared writeback not settled: find its commit by the turn trailer (committed → reuse, absent → write, unknown → fail closed). */
export async function readbackWritebackStep(
  ctx: TickCtx,
  id: TurnIdentity,
  t: TurnState,
  lookup: (goalId: string, turnKey: string, base: string) => Promise<Readback> = (g, k, b) =>
    repoOf(ctx).readbackWriteback(g, k, b),
): Promise<void> {
  const base = t.baseRevision ?? "";
  const rb: Readback = await lookup(id.goal_id, spendKey(id), base);
  ctx.progress({
    phase: "readback",
    detail: `writeback ${spendKey(id)}: ${rb.found}${rb.found === "unknown" ? ` (${rb.reason})` : ""}`,
  });
  if (rb.found === "committed" && rb.payload.phase === "durable_writeback") {
    // The work tree is a view of the branch: finish a move the crash interrupted (never over a local edit).
    const note = await repoOf(ctx).finishReadback(id.goal_id, base, rb.payload.commit);
    if (note) ctx.progress({ phase: "readback", detail: note });
  }
  const ref = effectRef(id, "durable_writeback");
  await ctx.j.append((s) => {
    const turn = turnDecision({
      type: "resolve_readback",
      identity: id,
      phase: "durable_writeback",
      effectRef: ref,
      readback: rb,
    })(s);
    return rb.found === "committed" && rb.payload.phase === "durable_writeback"
      ? [...turn, ...completion(s, id, rb.payload.commit)]
      : turn;
  });
}

/** quota_spend: charged once, keyed by the turn identity, in the same append as the turn's fact. */
export async function recordSpend(ctx: TickCtx, id: TurnIdentity, usage: Usage): Promise<void> {
  const key = spendKey(id);
  const at = ctx.now().toISOString();
  ctx.progress({
    phase: "quota_spend",
    detail: `${usage.turns} turn, ${usage.tokens} tokens, $${usage.cost_usd}`,
  });
  await ctx.j.append((s) => {
    let goal: GoalEventBody[];
    try {
      goal = decide(
        {
          type: "record_spend",
          turnId: key,
          at,
          turns: usage.turns,
          tokens: usage.tokens,
          costUsd: usage.cost_usd,
        },
        s,
      );
    } catch (e) {
      const reason = (e as Error).message;
      return turnDecision({
        type: "record_spend",
        identity: id,
        spendKey: key,
        usage,
        outcome: { kind: "rejected", reason },
      })(s);
    }
    return [
      ...turnDecision({
        type: "record_spend",
        identity: id,
        spendKey: key,
        usage,
        outcome: { kind: "accepted" },
      })(s),
      ...goal,
    ];
  });
}
