import { spendKey, type TurnFailureCode, type TurnIdentity } from "../../../core/events/goal/turn-events.js";
import type { GoalState } from "../../../core/goal/goal-state-shape.js";
import type { WakeUp } from "../../../core/goal/schedule/scheduler.js";
import { TurnRefusal } from "../../../core/goal/turn/turn-commands.js";
import { nextTurnPhase } from "../../../core/goal/turn/turn-decider.js";
import { TurnLeaseHeldError } from "../../../core/goal/turn/turn-lease.js";
import { LoopgateError } from "../../../core/kernel/errors.js";
import { thisOwner } from "../../stream/lease-owner.js";
import { GoalJournal } from "./goal-journal.js";
import { ackSchedule, applySchedule, wakeOfHint } from "./scheduler-phases.js";
import { type TickCtx, type TickDeps, turnDecision, turnOf } from "./tick-context.js";
import type { Tick, TickOutcome, TickRequest } from "./tick-outcome.js";
import { selectOrBind, unsettledTurn } from "./tick-select.js";
import { acquireTurnLease, keepTurnLease, releaseTurnLease } from "./turn-lease-keeper.js";
import { effectStep, progressTodo, recordStep, turnSummary } from "./turn-work.js";

/** How many facts one tick records at most (a turn needs about a dozen); a safety net against a loop. */
const MAX_STEPS = 60;
const retryNow = (why: string): WakeUp => ({ action: "run_now", at: null, why });
const repair = (why: string): WakeUp => ({ action: "repair_health", at: null, why });

/**
 * `goal tick`: one governed turn. Takes the goal's turn lease, resumes a turn left
 * unsettled (by readback) or binds a new one to the work the contract selects (tick-select.ts: an
 * advancement todo, an acceptance check, a due monitor, a replan obligation), and settles it phase by
 * phase, each a goal-stream fact: host_execute → typed_result → validation → durable_writeback →
 * quota_spend → scheduler_apply → scheduler_ack. A short switch over the pure `nextTurnPhase`; each
 * phase is the turn kind's method (turn-kind.ts, kind-registry.ts).
 */
export function makeTick(deps: TickDeps): Tick {
  return (req) => tick(deps, req);
}

export async function tick(deps: TickDeps, req: TickRequest): Promise<TickOutcome> {
  const now = deps.clock ?? (() => new Date());
  const j = new GoalJournal(deps.store, deps.localDir, req.goalId, now, deps.afterGoalAppend);
  await j.refresh();
  const owner = deps.owner ?? thisOwner();
  try {
    await acquireTurnLease(j, req.agentId, owner, now, deps.leaseTtlMs);
  } catch (e) {
    if (!(e instanceof TurnLeaseHeldError)) throw e;
    return {
      kind: "busy",
      holder: e.lease.holder,
      expiresAt: e.lease.expiresAt,
      wake: { action: "wait_until", at: e.lease.expiresAt, why: e.message },
    };
  }
  j.requireLease(owner.token);
  let lost: unknown = null;
  const keeper = keepTurnLease(
    j,
    owner.token,
    now,
    (e) => {
      lost = e;
    },
    deps.leaseTtlMs,
  );
  let current: TurnIdentity | null = null;
  const ctx: TickCtx = {
    deps,
    req,
    j,
    now,
    retriedReadbacks: new Set(),
    runs: new Map(),
    progress: (p) => {
      const t = current ? turnOf(j.state, current) : null;
      req.onProgress?.({
        turn: current ? j.state.turnOrder.indexOf(spendKey(current)) + 1 : j.state.turnOrder.length,
        todo: p.todo ?? progressTodo(j.state, t),
        phase: p.phase,
        detail: p.detail,
      });
    },
  };
  try {
    for (let step = 0; step < MAX_STEPS; step++) {
      if (lost) throw lost;
      if (req.signal?.aborted)
        return {
          kind: "stopped",
          reason: "interrupted; the next tick resumes the turn",
          wake: retryNow("interrupted"),
        };
      // One turn per tick: the turn this tick settled is reported once it is done.
      if (current && nextTurnPhase(turnOf(j.state, current)).kind === "done") {
        const done = await advance(ctx, current);
        if (done) return done;
      }
      current = unsettledTurn(ctx);
      if (!current) {
        const out = await selectOrBind(ctx);
        if (out) return out;
        continue;
      }
      const out = await advance(ctx, current);
      if (out) return out;
    }
    throw new LoopgateError("turn_loop", `goal ${req.goalId}: the turn did not settle in ${MAX_STEPS} steps`);
  } catch (e) {
    if (e instanceof TurnRefusal)
      return { kind: "failed", turn: current, code: e.failure, detail: e.message, wake: repair(e.message) };
    throw e;
  } finally {
    keeper.stop();
    await releaseTurnLease(j, owner.token, "tick finished").catch(() => {});
  }
}

/** One step of the open turn; an outcome when the tick is over. */
async function advance(ctx: TickCtx, id: TurnIdentity): Promise<TickOutcome | null> {
  const t = turnOf(ctx.j.state, id);
  const next = nextTurnPhase(t);
  const failed = (code: TurnFailureCode | "run_failed", detail: string, wake: WakeUp): TickOutcome => ({
    kind: "failed",
    turn: id,
    code,
    detail,
    wake,
  });
  switch (next.kind) {
    case "bind":
    case "released":
      return null;
    case "execute":
    case "readback":
      await effectStep(ctx, id, t, next.phase, next.kind === "readback");
      return null;
    case "record":
      await recordStep(ctx, id, t, next.phase);
      return null;
    case "retry_spend": {
      await recordStep(ctx, id, t, "quota_spend");
      const after = turnOf(ctx.j.state, id);
      return after.failure?.code === "quota_spend_rejected"
        ? failed("quota_spend_rejected", after.failure.detail, repair(after.failure.detail))
        : null;
    }
    case "scheduler_apply":
      if (t.applyFailures >= 3)
        return failed(
          "run_failed",
          `the host refused the scheduler hint ${t.applyFailures} times`,
          retryNow("retry the host update"),
        );
      await applySchedule(ctx, id);
      return null;
    case "scheduler_ack":
      await ackSchedule(ctx, id, t.applied?.hint ?? { action: "run_now", not_before: null, why: "" });
      return null;
    case "done": {
      // The ACKed hint, as recorded: a turn whose settlement closed the goal says so (terminal).
      const wake = wakeOfHint(t.acked?.hint ?? { action: "run_now", not_before: null, why: "" });
      const { result, changed } = turnSummary(ctx, id, t);
      return {
        kind: "advanced",
        turn: id,
        work: t.work ?? { kind: "todo", todo_id: "" },
        result,
        changed,
        wake,
      };
    }
    case "rebase_or_release": {
      // Re-validation on the new base would need a fresh run; the todo is given back instead (never forced).
      const detail = `the goal workspace moved to ${next.currentRevision.slice(0, 12)} during the turn; the todo is given back for a fresh turn on the new revision`;
      await ctx.j.append((s) =>
        turnOf(s, id).released ? [] : turnDecisionRelease(s, id, `needs_rebase: ${detail}`),
      );
      ctx.progress({ phase: "release", detail });
      return failed("needs_rebase", detail, retryNow("run the todo again on the new revision"));
    }
    case "repair": {
      const f = next.failure;
      await ctx.j.append((s) => turnDecisionRelease(s, id, `${f.code}: ${f.detail}`));
      ctx.progress({
        phase: "release",
        detail: `${f.code}: ${f.detail}; the todo stays open for another turn`,
      });
      return failed(f.code, f.detail, retryNow(`${f.code}: another turn may try again`));
    }
    case "blocked_health":
      // Repaired since (repair, verify, recompute)? Look the effect up again, once per tick.
      if (next.retry && !ctx.retriedReadbacks.has(next.retry.effectRef)) {
        ctx.retriedReadbacks.add(next.retry.effectRef);
        ctx.progress({ phase: "readback", detail: `again after blocked_health: ${next.retry.effectRef}` });
        await effectStep(ctx, id, t, next.retry.phase, true);
        return null;
      }
      return {
        kind: "failed",
        turn: id,
        code: "blocked_health",
        detail: next.reason,
        wake: repair(`turn ${spendKey(id)} is blocked: ${next.reason}`),
      };
  }
}

function turnDecisionRelease(s: GoalState, id: TurnIdentity, reason: string) {
  return turnDecision({ type: "release", identity: id, reason })(s);
}
