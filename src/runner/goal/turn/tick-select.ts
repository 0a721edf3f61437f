import type { TurnIdentity, TurnWork } from "../../../core/events/goal/turn-events.js";
import { budgetUsage } from "../../../core/goal/budget.js";
import type { InteractionContract } from "../../../core/goal/contract.js";
import type { WakeUp } from "../../../core/goal/schedule/scheduler.js";
import { nextTurnPhase } from "../../../core/goal/turn/turn-decider.js";
import { contractNow } from "./contract-now.js";
import { turnKind } from "./kind-registry.js";
import { type TickCtx, turnDecision } from "./tick-context.js";
import type { TickOutcome } from "./tick-outcome.js";
import type { TurnKind } from "./turn-kind.js";

/** Nothing for a tick now: look again when the next monitor is due, else on a change of state. */
function quietWake(c: InteractionContract, why: string): WakeUp {
  const next = c.monitors
    .flatMap((m) => (m.action === "quiet_noop" && m.nextDueAt ? [m.nextDueAt] : []))
    .sort((a, b) => Date.parse(a) - Date.parse(b))[0];
  return next
    ? { action: "wait_until", at: next, why: `${why}; the next monitor poll is due then` }
    : { action: "wait_state_change", at: null, why };
}

/**
 * A turn bound outside `eligible` (a monitor's poll while the goal waits, a planner turn) is spent like
 * any other, and the runtime state does not say whether the budget is left (`waiting`, `operator_gate`
 * and `focus_wait` come before `throttled`): with the budget spent it is not bound, and the tick says
 * throttled. Null: budget left.
 */
function budgetSpent(ctx: TickCtx, wake: WakeUp, what: string): TickOutcome | null {
  const b = budgetUsage(ctx.j.state, ctx.now());
  if (b.exhausted.length === 0) return null;
  return {
    kind: "throttled",
    reason: `${what} would be a turn, but the budget is spent (${b.exhausted.join(", ")})`,
    wake: b.windowReopensAt
      ? { action: "wait_until", at: b.windowReopensAt, why: "the quota window reopens then" }
      : { ...wake, why: `the budget is spent (${b.exhausted.join(", ")}); ${wake.why}` },
  };
}

/** Binds a new turn of `kind` to `work` on the goal's current revision. */
async function bind(ctx: TickCtx, kind: TurnKind, work: TurnWork): Promise<null> {
  const s = ctx.j.state;
  const identity: TurnIdentity = {
    goal_id: s.goalId,
    agent_id: ctx.req.agentId,
    turn_instance_id: `t${s.turnOrder.length + 1}`,
  };
  await ctx.j.append(turnDecision({ type: "bind", identity, work, baseRevision: s.revision }));
  ctx.progress({
    todo: kind.todoOf(work),
    phase: "bind",
    detail: `turn ${identity.turn_instance_id} on revision ${s.revision.slice(0, 12)}`,
  });
  return null;
}

/** The turn still to be settled (bound, neither done nor released), if any: it is resumed first. */
export function unsettledTurn(ctx: TickCtx): TurnIdentity | null {
  const s = ctx.j.state;
  for (const key of [...s.turnOrder].reverse()) {
    const t = s.turns[key];
    if (!t?.identity) continue;
    const k = nextTurnPhase(t).kind;
    if (k !== "done" && k !== "released") return t.identity;
  }
  return null;
}

/**
 * No turn is open: read the contract. Work of a kind the runtime state admits → bind a new turn to it
 * and the goal's revision (returns null: go on); anything else → the outcome that says why not. Each
 * kind says whether it has work now and which (`select`); the state says which kinds may have a turn.
 */
export async function selectOrBind(ctx: TickCtx): Promise<TickOutcome | null> {
  const { contract: c, wake } = await contractNow(ctx);
  const s = ctx.j.state;
  if (c.terminal)
    return { kind: "terminal", closure: `no_followup: ${s.noFollowup?.rationale ?? c.reason}`, wake };
  switch (c.runtimeState) {
    case "paused":
    case "blocked_health":
      return { kind: "stopped", reason: `${c.runtimeState}: ${c.reason}`, wake };
    case "operator_gate": {
      // A gate holds the work it covers, not the world: a due monitor's poll is an observation of its own
      //, never an advancement frontier, so it is the turn while the goal waits on a person.
      const monitor = turnKind("monitor");
      const due = monitor.select(ctx, c);
      if (due.found && !budgetSpent(ctx, wake, due.what)) return bind(ctx, monitor, due.work);
      const g = c.userChannel.gates[0];
      return {
        kind: "waiting_person",
        who: g ? `a person deciding ${g.scope} (${g.content})` : "a person",
        gateId: g?.gateId ?? "",
        wake,
      };
    }
    case "throttled":
      return { kind: "throttled", reason: c.reason, wake };
    case "waiting": {
      const monitor = turnKind("monitor");
      const due = monitor.select(ctx, c);
      if (due.found) return budgetSpent(ctx, wake, due.what) ?? bind(ctx, monitor, due.work);
      const quiet = c.monitors
        .filter((m) => m.action === "quiet_noop")
        .map((m) => `${m.todoId} next due ${m.nextDueAt}`);
      const note = quiet.length ? `; monitors not due (quiet no-op): ${quiet.join(", ")}` : "";
      return { kind: "idle", reason: `waiting: ${c.reason}${note}`, wake };
    }
    case "focus_wait": {
      const replan = turnKind("replan");
      const planned = replan.select(ctx, c);
      if (planned.found) return budgetSpent(ctx, wake, planned.what) ?? bind(ctx, replan, planned.work);
      return {
        kind: "idle",
        reason: `replan obligation: ${c.reason}; no planner turn (${planned.why}); an operator answers: loopgate todo add, goal close`,
        wake: {
          action: "wait_state_change",
          at: null,
          why: "a replan obligation needs an operator's answer",
        },
      };
    }
    case "eligible":
      break;
  }
  // The frontier is exhausted and acceptance is not proved on this revision: a turn proves it.
  const acceptance = turnKind("acceptance");
  const proof = acceptance.select(ctx, c);
  if (proof.found) return bind(ctx, acceptance, proof.work);
  const todo = turnKind("todo");
  const advancement = todo.select(ctx, c);
  if (advancement.found) return bind(ctx, todo, advancement.work);
  // No advancement todo selected (nor acceptance, which goal accept proves): a due monitor is the turn's work.
  const monitor = turnKind("monitor");
  const due = monitor.select(ctx, c);
  if (due.found) return bind(ctx, monitor, due.work);
  return {
    kind: "idle",
    reason: `${advancement.why} and no monitor is due`,
    wake: quietWake(c, "no advancement todo is selected"),
  };
}
