import {
  dependencyResolved,
  type GoalState,
  isResumeCandidate,
  pendingGates,
  scopeWaits,
  type TodoState,
} from "../../core/goal/index.js";
import type { GoalFacts, GoalView, TodoView } from "./goal-engine.js";

// The derived decisions the CLI shows: runtime state by the seed's precedence, the interaction contract,
// the frontier gaps of terminal closure. Pure functions of the folded state and the outside facts, never
// stored. (Provisional home: core/goal is to own these; the view's shape stays the same when it does.)

const RUNTIME_STATES = [
  "blocked_health",
  "operator_gate",
  "focus_wait",
  "eligible",
  "waiting",
  "throttled",
  "paused",
] as const;
type RuntimeState = (typeof RUNTIME_STATES)[number];

/** Open advancement todos whose dependencies are resolved and whose decisions are made, in goal order. */
function selectable(state: GoalState): TodoState[] {
  return state.order
    .map((id) => state.todos[id] as TodoState)
    .filter(
      (t) =>
        t.status === "open" &&
        t.class === "advancement_task" &&
        t.depends_on.every((d) => dependencyResolved(state, d)) &&
        scopeWaits(state, t).length === 0,
    );
}

/** Budget use in the current window, and whether a limit is spent. */
function budgetOf(state: GoalState, now: Date) {
  const since = now.getTime() - state.budget.window_seconds * 1000;
  const inWindow = state.spends.filter((s) => Date.parse(s.at) >= since);
  const turns = inWindow.reduce((n, s) => n + s.turns, 0);
  const tokens = state.spends.reduce((n, s) => n + s.tokens, 0);
  const cost = state.spends.reduce((n, s) => n + s.cost_usd, 0);
  const b = state.budget;
  const limits: Record<string, number> = {};
  const used: Record<string, number> = {};
  if (b.turns_per_window !== undefined) {
    limits.turns = b.turns_per_window;
    used.turns = turns;
  }
  if (b.max_tokens !== undefined) {
    limits.tokens = b.max_tokens;
    used.tokens = tokens;
  }
  if (b.max_cost_usd !== undefined) {
    limits.cost_usd = b.max_cost_usd;
    used.cost_usd = Math.round(cost * 1e6) / 1e6;
  }
  const spent = Object.keys(limits).filter((k) => (used[k] ?? 0) >= (limits[k] ?? Number.POSITIVE_INFINITY));
  return { limits, used, spent };
}

/** Whether an acceptance item has a SUCCESS receipt on the goal's current revision (and acceptance version). */
function proved(state: GoalState, id: string): boolean {
  return (state.acceptanceReceipts[id] ?? []).some(
    (r) =>
      r.receipt.status === "SUCCESS" &&
      r.receipt.goal_revision === state.revision &&
      r.acceptance_version === state.acceptanceVersion,
  );
}

function todoView(state: GoalState, t: TodoState, now: string): TodoView {
  return {
    id: t.id,
    class: t.class,
    status: t.status,
    content: t.content,
    task: t.task,
    decisionScope: t.decision_scope,
    dependsOn: t.depends_on,
    requires: t.required_decision_scopes,
    claimedBy: t.claimed_by,
    resumeCandidate: isResumeCandidate(state, t, now),
    resumeWhen: t.resume_when,
    supersededBy: t.superseded_by,
    successorOf: t.successor_of,
    noFollowup: t.no_followup?.rationale ?? null,
    gateDecision: t.decision,
    completion: t.completion ? { runId: t.completion.run_id, revision: t.completion.goal_revision } : null,
    handoff: null,
    note: t.note,
    blockReason: t.block_reason,
  };
}

/** The frontier items that keep the goal from terminal closure. */
function frontierGaps(state: GoalState, facts: GoalFacts, throttled: boolean): string[] {
  const gaps: string[] = [];
  for (const id of state.order) {
    const t = state.todos[id] as TodoState;
    if (t.status !== "done") gaps.push(`${t.id} is ${t.status} (${t.class})`);
  }
  for (const a of state.acceptance)
    if (!proved(state, a.id))
      gaps.push(`acceptance ${a.id} is not proved on revision ${state.revision.slice(0, 12)}`);
  if (!state.noFollowup) gaps.push("no structured no_followup intent is recorded");
  if (state.activation === "stopped") gaps.push("the goal is stopped");
  if (throttled) gaps.push("the budget window is spent");
  if (facts.health.length || state.anomalies.length) gaps.push("health problems are open");
  return gaps;
}

/** The goal's view: facts, runtime state, contract, closure. */
export function deriveGoal(state: GoalState, streamRevision: number, facts: GoalFacts): GoalView {
  const now = facts.now.toISOString();
  const g = state.goalId;
  const todos = state.order.map((id) => todoView(state, state.todos[id] as TodoState, now));
  const health = [...facts.health, ...state.anomalies];
  const budget = budgetOf(state, facts.now);
  const candidates = selectable(state);
  const gates = pendingGates(state);
  const askedGates = gates.filter((p) => p.covers.length > 0);
  const waitingOnGate = state.order
    .map((id) => state.todos[id] as TodoState)
    .some(
      (t) =>
        t.status === "open" &&
        t.class !== "user_gate" &&
        scopeWaits(state, t).some((w) => w.status === "pending"),
    );
  const selected = candidates[0] ?? null;
  const throttled = budget.spent.length > 0;
  const gaps = frontierGaps(state, facts, throttled);
  const closed = gaps.length === 0;
  const open = todos.filter((t) => t.status !== "done");
  let runtime: RuntimeState;
  let reason: string;
  if (health.length) {
    runtime = "blocked_health";
    reason = health.join("; ");
  } else if (!selected && waitingOnGate && askedGates.length) {
    runtime = "operator_gate";
    reason = `the remaining work waits on ${askedGates.map((p) => `${p.gate_id} (scope ${p.scope})`).join(", ")}`;
  } else if (selected && state.activation === "active" && !throttled) {
    runtime = "eligible";
    reason = `${selected.id} is open, its dependencies are resolved and its decisions made`;
  } else if (state.activation === "active" && !throttled && open.length) {
    runtime = "waiting";
    reason = `nothing can run now: ${open.map((t) => `${t.id} ${t.status}`).join(", ")}`;
  } else if (throttled) {
    runtime = "throttled";
    reason = `the budget is spent: ${budget.spent.join(", ")}`;
  } else if (state.activation === "stopped") {
    runtime = "paused";
    reason = "the goal is stopped (loopgate goal resume to continue)";
  } else {
    runtime = "waiting";
    reason = closed ? "the goal is closed" : (gaps[0] ?? "nothing to do");
  }
  const allDone = open.length === 0;
  const unproved = state.acceptance.filter((a) => !proved(state, a.id));
  const actions: string[] = [];
  if (runtime === "blocked_health") actions.push(`repair: ${health[0]}`);
  if (runtime === "eligible" && selected) actions.push(`loopgate todo run ${g} ${selected.id}`);
  for (const p of askedGates) actions.push(`loopgate gate approve ${g} ${p.gate_id}`);
  if (runtime === "paused") actions.push(`loopgate goal resume ${g}`);
  if (allDone && unproved.length && runtime !== "blocked_health") actions.push(`loopgate goal accept ${g}`);
  const nextAction = closed
    ? "nothing: the goal is closed, every frontier item is proved"
    : (actions[0] ??
      (runtime === "throttled"
        ? "wait for the budget window"
        : `a person acts on: ${gaps[0] ?? "the goal"}`));
  const contract = {
    goal_id: g,
    runtime_state: runtime,
    reason,
    user_channel: {
      action_required: askedGates.length > 0,
      gates: askedGates.map((p) => ({
        gate_id: p.gate_id,
        scope: p.scope,
        covers: p.covers,
        content: p.content,
      })),
    },
    agent_channel:
      runtime === "eligible" && selected
        ? { must_attempt: true, selected_todo: selected.id }
        : { must_attempt: false, selected_todo: null, selection_reason: reason },
    workspace_guard: {
      revision: state.revision,
      head: facts.workspaceRevision,
      clean: facts.health.length === 0,
    },
    scheduler_hint: {
      action:
        runtime === "eligible"
          ? "run_now"
          : runtime === "operator_gate"
            ? "wait_for_user"
            : runtime === "paused" || closed
              ? "stop"
              : runtime === "throttled"
                ? "wait_for_quota_window"
                : runtime === "blocked_health"
                  ? "return_to_owner"
                  : "wait_for_state_change",
      not_before: null,
    },
    next_cli_actions: actions,
  };
  return {
    goalId: g,
    objective: state.objective,
    activation: state.activation,
    streamRevision,
    revision: state.revision,
    workspacePath: state.workspace?.path ?? "",
    agent: state.agent ?? { agent_id: "operator", kind: "builder" },
    sourcePath: null,
    todos,
    runtimeState: runtime,
    runtimeReason: reason,
    contract,
    nextAction,
    frontierGaps: gaps,
    closed,
    budget: { limits: budget.limits, used: budget.used },
    acceptance: state.acceptance.map((a) => ({ id: a.id, ref: a.ref, proved: proved(state, a.id) })),
  };
}
