import type { TurnIdentity, TurnWork } from "../../../core/events/goal/turn-events.js";
import { budgetUsage } from "../../../core/goal/budget.js";
import { type InteractionContract, interactionContract } from "../../../core/goal/contract.js";
import { monitorDueTimes } from "../../../core/goal/monitor-goal.js";
import { contractView, nextWakeUp, type WakeUp } from "../../../core/goal/schedule/scheduler.js";
import { nextTurnPhase } from "../../../core/goal/turn/turn-decider.js";
import { goalStateHealth } from "../goal-service.js";
import { obligationId, openObligation, tickPlanner } from "./replan-step.js";
import type { TickCtx } from "./tick-context.js";
import { turnDecision } from "./tick-context.js";
import type { TickOutcome } from "./tick-outcome.js";

/** A monitor to poll or complete now (a not-yet-due one is a quiet no-op: nothing runs, nothing is spent). */
const dueMonitor = (c: InteractionContract) =>
  c.monitors.find((m) => m.action === "poll" || m.action === "complete") ?? null;

/** Nothing for a tick now: look again when the next monitor is due, else on a change of state. */
function quietWake(c: InteractionContract, why: string): WakeUp {
  const next = c.monitors
    .flatMap((m) => (m.action === "quiet_noop" && m.next_due_at ? [m.next_due_at] : []))
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
  const b = budgetUsage(ctx.j.state, ctx.now().toISOString());
  if (b.exhausted.length === 0) return null;
  return {
    kind: "throttled",
    reason: `${what} would be a turn, but the budget is spent (${b.exhausted.join(", ")})`,
    wake: b.window_reopens_at
      ? { action: "wait_until", at: b.window_reopens_at, why: "the quota window reopens then" }
      : { ...wake, why: `the budget is spent (${b.exhausted.join(", ")}); ${wake.why}` },
  };
}

/** Binds a new turn to `work` on the goal's current revision. */
async function bind(ctx: TickCtx, work: TurnWork, label: string | null): Promise<null> {
  const s = ctx.j.state;
  const identity: TurnIdentity = {
    goal_id: s.goalId,
    agent_id: ctx.req.agentId,
    turn_instance_id: `t${s.turnOrder.length + 1}`,
  };
  await ctx.j.append(turnDecision({ kind: "bind", identity, work, base_revision: s.revision }));
  ctx.progress({
    todo: label,
    phase: "bind",
    detail: `turn ${identity.turn_instance_id} on revision ${s.revision.slice(0, 12)}`,
  });
  return null;
}

/**
 * The interaction contract now, with the health facts (task files, the goal workspace). The goal is the
 * journal's (read once per tick, every own append folded in); only the health is looked up, as it is all
 * the contract takes from outside the stream.
 */
export async function contractNow(ctx: TickCtx): Promise<{ contract: InteractionContract; wake: WakeUp }> {
  const now = ctx.now();
  const state = ctx.j.state;
  const health = await goalStateHealth(ctx.deps.store, ctx.deps.storeDir, state);
  const contract = interactionContract(state, {
    now: now.toISOString(),
    health: health.problems,
  });
  const wake = nextWakeUp(contractView(contract), {
    now: now.toISOString(),
    monitor_due: monitorDueTimes(contract.monitors, now.toISOString()),
    backoff: null,
  });
  return { contract, wake };
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
 * No turn is open: read the contract. Eligible with an advancement todo selected → bind a new turn to it
 * and its starting revision (returns null: go on); anything else → the outcome that says why not.
 */
export async function selectOrBind(ctx: TickCtx): Promise<TickOutcome | null> {
  const { contract: c, wake } = await contractNow(ctx);
  const s = ctx.j.state;
  if (c.terminal)
    return { kind: "terminal", closure: `no_followup: ${s.noFollowup?.rationale ?? c.reason}`, wake };
  switch (c.runtime_state) {
    case "paused":
    case "blocked_health":
      return { kind: "stopped", reason: `${c.runtime_state}: ${c.reason}`, wake };
    case "operator_gate": {
      // A gate holds the work it covers, not the world: a due monitor's poll is an observation of its own
      //, never an advancement frontier, so it is the turn while the goal waits on a person.
      const due = dueMonitor(c);
      if (due && !budgetSpent(ctx, wake, `monitor ${due.todo_id}'s poll`))
        return bind(ctx, { kind: "todo", todo_id: due.todo_id }, due.todo_id);
      const g = c.user_channel.gates[0];
      return {
        kind: "waiting_person",
        who: g ? `a person deciding ${g.scope} (${g.content})` : "a person",
        gate_id: g?.gate_id ?? "",
        wake,
      };
    }
    case "throttled":
      return { kind: "throttled", reason: c.reason, wake };
    case "waiting": {
      const due = dueMonitor(c);
      if (due)
        return (
          budgetSpent(ctx, wake, `monitor ${due.todo_id}'s poll`) ??
          bind(ctx, { kind: "todo", todo_id: due.todo_id }, due.todo_id)
        );
      const quiet = c.monitors
        .filter((m) => m.action === "quiet_noop")
        .map((m) => `${m.todo_id} next due ${m.next_due_at}`);
      const note = quiet.length ? `; monitors not due (quiet no-op): ${quiet.join(", ")}` : "";
      return { kind: "idle", reason: `waiting: ${c.reason}${note}`, wake };
    }
    case "focus_wait": {
      const o = openObligation(s);
      const model = o ? tickPlanner(ctx) : "no open obligation a planner turn answers";
      if (o && typeof model !== "string")
        return (
          budgetSpent(ctx, wake, `the planner turn on ${obligationId(o)}`) ??
          bind(ctx, { kind: "replan", obligation_id: obligationId(o) }, null)
        );
      return {
        kind: "idle",
        reason: `replan obligation: ${c.reason}; no planner turn (${model}); an operator answers: loopgate todo add, goal close`,
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
  const sel = c.agent_channel.selected_action;
  // The frontier is exhausted and acceptance is not proved on this revision: a turn proves it.
  if (sel?.kind === "acceptance")
    return bind(ctx, { kind: "acceptance", acceptance_ids: sel.acceptance_ids }, null);
  const todo = sel?.kind === "todo" ? s.todos[sel.todo_id] : undefined;
  const due = dueMonitor(c);
  // No advancement todo selected (nor acceptance, which goal accept proves): a due monitor is the turn's work.
  if ((todo?.class !== "advancement_task" || !todo.task) && due)
    return bind(ctx, { kind: "todo", todo_id: due.todo_id }, due.todo_id);
  if (todo?.class !== "advancement_task" || !todo.task)
    return {
      kind: "idle",
      reason: `the selected work ${todo ? `${todo.id} (${todo.class})` : "(none)"} is not an advancement todo and no monitor is due`,
      wake: quietWake(c, "no advancement todo is selected"),
    };
  return bind(ctx, { kind: "todo", todo_id: todo.id }, todo.id);
}
