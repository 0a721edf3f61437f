import { terminalClosure } from "./closure.js";
import type { PendingGate } from "./gates.js";
import type { GoalState } from "./goal-state-shape.js";
import { type MonitorSchedule, monitorDueTimes, monitorSchedules } from "./monitor-goal.js";
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
  goalId: string;
  runtimeState: RuntimeState;
  reason: string;
  userChannel: {
    actionRequired: boolean;
    gates: PendingGate[];
    actions: Assessment["operatorActions"];
  };
  agentChannel: {
    mustAttempt: boolean;
    selectedTodo: string | null;
    selectedAction: Selection | null;
    selectionReason: string;
  };
  workspaceGuard: {
    goalRevision: string;
    workspace: string | null;
    /** Work runs only on a clean goal workspace at exactly `goal_revision`. */
    requireCleanAtRevision: true;
    ok: boolean;
    issues: HealthIssue[];
  };
  schedulerHint: { action: SchedulerAction; notBefore: string | null };
  /**
   * The open monitors and when each is next due (the scheduler reads next_due_at). A monitor is never
   * the selected work: a due one is polled by a governed turn, a not-yet-due one is a quiet no-op.
   */
  monitors: MonitorSchedule[];
  nextCliActions: CliAction[];
  terminal: boolean;
}

const WORKSPACE_CODES = /workspace|revision|git/;

/** The contract now. */
export function interactionContract(state: GoalState, ctx: GoalContext): InteractionContract {
  const a = assess(state, ctx);
  const closure = terminalClosure(state, ctx, a);
  const s = a.runtimeState;
  const must = s === "eligible" || s === "focus_wait";
  const selection = s === "eligible" ? a.selection : null;
  const wsIssues = a.health.filter((h) => WORKSPACE_CODES.test(h.code));
  return {
    goalId: state.goalId,
    runtimeState: s,
    reason: a.reason,
    userChannel: {
      actionRequired: a.gates.length > 0 || a.operatorActions.length > 0,
      gates: a.gates,
      actions: a.operatorActions,
    },
    agentChannel: {
      mustAttempt: must,
      selectedTodo: selection?.kind === "todo" ? selection.todoId : null,
      selectedAction: selection,
      selectionReason:
        s === "eligible"
          ? (selection?.reason ?? "")
          : s === "focus_wait"
            ? `answer the obligations first: ${a.reason}`
            : `nothing is selected: ${s} (${a.reason})`,
    },
    workspaceGuard: {
      goalRevision: state.revision,
      workspace: state.workspace?.path ?? null,
      requireCleanAtRevision: true,
      ok: wsIssues.length === 0,
      issues: wsIssues,
    },
    schedulerHint: schedulerHint(state, a, closure.terminal, ctx),
    monitors: monitorSchedules(state, ctx.now),
    nextCliActions: cliActions(state, a),
    terminal: closure.terminal,
  };
}

function schedulerHint(state: GoalState, a: Assessment, terminal: boolean, ctx: GoalContext) {
  switch (a.runtimeState) {
    case "blocked_health":
      return { action: "repair_health" as const, notBefore: null };
    case "operator_gate":
      return { action: "ask_user" as const, notBefore: null };
    case "focus_wait":
    case "eligible":
      return { action: "run_now" as const, notBefore: ctx.now.toISOString() };
    case "waiting": {
      if (terminal) return { action: "terminal_no_followup" as const, notBefore: null };
      const monitors = monitorDueTimes(monitorSchedules(state, ctx.now), ctx.now);
      const times = state.order
        .map((id) => state.todos[id]?.resumeWhen)
        .flatMap((c) => (c?.kind === "at" && Date.parse(c.at) > ctx.now.getTime() ? [c.at] : []))
        .concat(monitors)
        .sort((x, y) => Date.parse(x) - Date.parse(y));
      return { action: "wait_condition" as const, notBefore: times[0] ?? null };
    }
    case "throttled":
      return { action: "wait_quota" as const, notBefore: a.budget.windowReopensAt };
    case "paused":
      return { action: "stop" as const, notBefore: null };
  }
}

function cliActions(state: GoalState, a: Assessment): CliAction[] {
  const g = state.goalId;
  const out: CliAction[] = [];
  if (a.runtimeState === "blocked_health")
    out.push({
      argv: ["loopgate", "goal", "status", g],
      why: "repair the health issues it lists, then look again",
    });
  if (a.runtimeState === "paused")
    out.push({ argv: ["loopgate", "goal", "resume", g], why: "the goal is stopped" });
  const sel = a.selection;
  // Only sequences that persist the outcome: a governed turn runs the todo's task and writes its change
  // back (one commit) with the todo's completion; `todo run` alone persists nothing.
  if (a.runtimeState === "eligible" && sel?.kind === "todo") {
    const t = state.todos[sel.todoId];
    if (t?.task)
      out.push({
        argv: ["loopgate", "goal", "tick", g],
        why: `one governed turn: runs ${t.id}'s task on the goal workspace and writes its change back with ${t.id}'s completion`,
      });
  }
  if (a.runtimeState === "eligible" && sel?.kind === "acceptance")
    out.push({
      argv: ["loopgate", "goal", "accept", g],
      why: `prove acceptance (${sel.acceptanceIds.join(", ")}) fresh on the current revision`,
    });
  for (const gate of a.gates)
    out.push({
      argv: ["loopgate", "gate", "approve", g, gate.gateId],
      why: `decide ${gate.scope}${gate.askedAgain ? " (asked again: its deferral's condition holds)" : ""} (or reject, cancel, defer --until COND)`,
    });
  for (const o of a.operatorActions) {
    if (o.action === "resume_candidate" || o.action === "monitor_stopped")
      out.push({ argv: ["loopgate", "todo", "reopen", g, o.todoId], why: o.detail });
    else if (o.action === "user_action")
      // A person's step is recorded with its evidence, not closed as if nobody did it.
      out.push({
        argv: ["loopgate", "todo", "done", g, o.todoId, "--note", "TEXT", "--evidence-url", "URL"],
        why: `${o.detail} (done: record it with a link or --evidence-file FILE)`,
      });
    else
      out.push({
        argv: ["loopgate", "todo", "close-no-followup", g, o.todoId, "--rationale", "TEXT"],
        why: o.detail,
      });
  }
  for (const o of a.obligations) out.push(obligationAction(g, o));
  return out;
}

/** The command that answers an obligation. */
function obligationAction(g: string, o: Assessment["obligations"][number]): CliAction {
  const todo = (extra: string[] = []) => [
    "loopgate",
    "todo",
    "add",
    g,
    "TODO_ID",
    "--content",
    "TEXT",
    ...extra,
  ];
  switch (o.kind) {
    case "closeout":
      return { argv: ["loopgate", "goal", "close", g, "--rationale", "TEXT"], why: o.detail };
    case "vision_missing":
      return { argv: ["loopgate", "goal", "vision", "record", g, "--route", "TEXT"], why: o.detail };
    case "vision_stale":
      return { argv: ["loopgate", "goal", "vision", "unchanged", g, "--reason", "TEXT"], why: o.detail };
    case "handoff_without_successor":
      return { argv: todo(["--class", "user_action", "--successor-of", o.subject]), why: o.detail };
    default:
      return { argv: todo(), why: o.detail };
  }
}
