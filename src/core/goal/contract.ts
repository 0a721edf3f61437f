import { terminalClosure } from "./closure.js";
import type { PendingGate } from "./gates.js";
import type { GoalState } from "./goal-state-shape.js";
import { type MonitorSchedule, monitorSchedules } from "./monitor-goal.js";
import {
  type Assessment,
  assess,
  type GoalContext,
  type HealthIssue,
  type RuntimeState,
  type Selection,
} from "./runtime-state.js";

/**
 * The interaction contract: what may happen now and why, the one thing a host, a worker or a person
 * needs to act. A pure function of the facts, the health input and now; never stored.
 */
export type SchedulerAction =
  | "run_now"
  | "ask_user"
  | "repair_health"
  | "wait_condition"
  | "wait_quota"
  | "stop"
  | "terminal_no_followup";

/** A command a person or host can run next; `argv` is the loopgate command line. */
export interface CliAction {
  argv: string[];
  why: string;
}

export interface InteractionContract {
  goal_id: string;
  runtime_state: RuntimeState;
  reason: string;
  user_channel: {
    action_required: boolean;
    gates: PendingGate[];
    actions: Assessment["operator_actions"];
  };
  agent_channel: {
    must_attempt: boolean;
    selected_todo: string | null;
    selected_action: Selection | null;
    selection_reason: string;
  };
  workspace_guard: {
    goal_revision: string;
    workspace: string | null;
    /** Work runs only on a clean goal workspace at exactly `goal_revision`. */
    require_clean_at_revision: true;
    ok: boolean;
    issues: HealthIssue[];
  };
  scheduler_hint: { action: SchedulerAction; not_before: string | null };
  /**
   * The open monitors and when each is next due (the scheduler reads next_due_at). A monitor is never
   * the selected work: a due one is polled by a governed turn, a not-yet-due one is a quiet no-op.
   */
  monitors: MonitorSchedule[];
  next_cli_actions: CliAction[];
  terminal: boolean;
}

const WORKSPACE_CODES = /workspace|revision|git/;

/** The contract now. */
export function interactionContract(state: GoalState, ctx: GoalContext): InteractionContract {
  const a = assess(state, ctx);
  const closure = terminalClosure(state, ctx, a);
  const s = a.runtime_state;
  const must = s === "eligible" || s === "focus_wait";
  const selection = s === "eligible" ? a.selection : null;
  const wsIssues = a.health.filter((h) => WORKSPACE_CODES.test(h.code));
  return {
    goal_id: state.goalId,
    runtime_state: s,
    reason: a.reason,
    user_channel: {
      action_required: a.gates.length > 0 || a.operator_actions.length > 0,
      gates: a.gates,
      actions: a.operator_actions,
    },
    agent_channel: {
      must_attempt: must,
      selected_todo: selection?.kind === "todo" ? selection.todo_id : null,
      selected_action: selection,
      selection_reason:
        s === "eligible"
          ? (selection?.reason ?? "")
          : s === "focus_wait"
            ? `answer the obligations first: ${a.reason}`
            : `nothing is selected: ${s} (${a.reason})`,
    },
    workspace_guard: {
      goal_revision: state.revision,
      workspace: state.workspace?.path ?? null,
      require_clean_at_revision: true,
      ok: wsIssues.length === 0,
      issues: wsIssues,
    },
    scheduler_hint: schedulerHint(state, a, closure.terminal, ctx),
    monitors: monitorSchedules(state, ctx.now),
    next_cli_actions: cliActions(state, a),
    terminal: closure.terminal,
  };
}

function schedulerHint(state: GoalState, a: Assessment, terminal: boolean, ctx: GoalContext) {
  switch (a.runtime_state) {
    case "blocked_health":
      return { action: "repair_health" as const, not_before: null };
    case "operator_gate":
      return { action: "ask_user" as const, not_before: null };
    case "focus_wait":
    case "eligible":
      return { action: "run_now" as const, not_before: ctx.now };
    case "waiting": {
      if (terminal) return { action: "terminal_no_followup" as const, not_before: null };
      const monitors = monitorSchedules(state, ctx.now).flatMap((m) =>
        m.action === "quiet_noop" && m.next_due_at ? [m.next_due_at] : m.action === "done" ? [] : [ctx.now],
      );
      const times = state.order
        .map((id) => state.todos[id]?.resume_when)
        .flatMap((c) => (c?.kind === "at" && Date.parse(c.at) > Date.parse(ctx.now) ? [c.at] : []))
        .concat(monitors)
        .sort((x, y) => Date.parse(x) - Date.parse(y));
      return { action: "wait_condition" as const, not_before: times[0] ?? null };
    }
    case "throttled":
      return { action: "wait_quota" as const, not_before: a.budget.window_reopens_at };
    case "paused":
      return { action: "stop" as const, not_before: null };
  }
}

function cliActions(state: GoalState, a: Assessment): CliAction[] {
  const g = state.goalId;
  const out: CliAction[] = [];
  if (a.runtime_state === "blocked_health")
    out.push({
      argv: ["loopgate", "goal", "status", g],
      why: "repair the health issues it lists, then look again",
    });
  if (a.runtime_state === "paused")
    out.push({ argv: ["loopgate", "goal", "resume", g], why: "the goal is stopped" });
  const sel = a.selection;
  if (a.runtime_state === "eligible" && sel?.kind === "todo") {
    const t = state.todos[sel.todo_id];
    if (t?.task) {
      out.push({
        argv: ["loopgate", "todo", "run", g, t.id],
        why: `run ${t.id}'s task on the goal workspace`,
      });
      out.push({
        argv: ["loopgate", "todo", "done", g, t.id, "--evidence", "RUN_ID"],
        why: "record its SUCCESS as the evidence",
      });
    }
  }
  if (a.runtime_state === "eligible" && sel?.kind === "acceptance")
    out.push({
      argv: ["loopgate", "goal", "accept", g],
      why: `prove acceptance (${sel.acceptance_ids.join(", ")}) fresh on the current revision`,
    });
  for (const gate of a.gates)
    out.push({
      argv: ["loopgate", "gate", "approve", g, gate.gate_id],
      why: `decide ${gate.scope} (or reject, cancel, defer --until COND)`,
    });
  for (const o of a.operator_actions) {
    if (o.action === "resume_candidate")
      out.push({ argv: ["loopgate", "todo", "reopen", g, o.todo_id], why: o.detail });
    else
      out.push({
        argv: ["loopgate", "todo", "close-no-followup", g, o.todo_id, "--rationale", "TEXT"],
        why: o.detail,
      });
  }
  for (const o of a.obligations)
    out.push(
      o.kind === "closeout"
        ? { argv: ["loopgate", "goal", "close", g, "--rationale", "TEXT"], why: o.detail }
        : { argv: ["loopgate", "todo", "add", g, "TODO_ID", "--content", "TEXT"], why: o.detail },
    );
  return out;
}
