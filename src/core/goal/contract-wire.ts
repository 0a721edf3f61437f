import type { InteractionContract, SchedulerAction } from "./contract.js";
import type { MonitorAction } from "./monitor-goal.js";
import type { HealthIssue, RuntimeState } from "./runtime-state.js";

/**
 * The interaction contract as `goal next --json` prints it and a host reads it: snake_case keys in a
 * fixed order. The contract itself (contract.ts) is a TypeScript value; this is its one encoder, so
 * the printed shape never follows a rename in the code.
 */
export interface ContractWire {
  goal_id: string;
  runtime_state: RuntimeState;
  reason: string;
  user_channel: {
    action_required: boolean;
    gates: { gate_id: string; scope: string; content: string; covers: string[]; asked_again: boolean }[];
    actions: {
      todo_id: string;
      action: "user_action" | "resume_candidate" | "rejected_scope" | "monitor_stopped";
      detail: string;
    }[];
  };
  agent_channel: {
    must_attempt: boolean;
    selected_todo: string | null;
    selected_action:
      | { kind: "todo"; todo_id: string; reason: string }
      | { kind: "acceptance"; acceptance_ids: string[]; reason: string }
      | null;
    selection_reason: string;
  };
  workspace_guard: {
    goal_revision: string;
    workspace: string | null;
    require_clean_at_revision: true;
    ok: boolean;
    issues: HealthIssue[];
  };
  scheduler_hint: { action: SchedulerAction; not_before: string | null };
  monitors: {
    todo_id: string;
    action: MonitorAction;
    next_due_at: string | null;
    consecutive_no_change: number;
    generation: number;
    stop: string | null;
  }[];
  next_cli_actions: { argv: string[]; why: string }[];
  terminal: boolean;
}

/** The contract in its printed shape. */
export function encodeContract(c: InteractionContract): ContractWire {
  const sel = c.agentChannel.selectedAction;
  return {
    goal_id: c.goalId,
    runtime_state: c.runtimeState,
    reason: c.reason,
    user_channel: {
      action_required: c.userChannel.actionRequired,
      gates: c.userChannel.gates.map((g) => ({
        gate_id: g.gateId,
        scope: g.scope,
        content: g.content,
        covers: g.covers,
        asked_again: g.askedAgain,
      })),
      actions: c.userChannel.actions.map((a) => ({ todo_id: a.todoId, action: a.action, detail: a.detail })),
    },
    agent_channel: {
      must_attempt: c.agentChannel.mustAttempt,
      selected_todo: c.agentChannel.selectedTodo,
      selected_action:
        sel === null
          ? null
          : sel.kind === "todo"
            ? { kind: "todo", todo_id: sel.todoId, reason: sel.reason }
            : { kind: "acceptance", acceptance_ids: sel.acceptanceIds, reason: sel.reason },
      selection_reason: c.agentChannel.selectionReason,
    },
    workspace_guard: {
      goal_revision: c.workspaceGuard.goalRevision,
      workspace: c.workspaceGuard.workspace,
      require_clean_at_revision: c.workspaceGuard.requireCleanAtRevision,
      ok: c.workspaceGuard.ok,
      issues: c.workspaceGuard.issues,
    },
    scheduler_hint: { action: c.schedulerHint.action, not_before: c.schedulerHint.notBefore },
    monitors: c.monitors.map((m) => ({
      todo_id: m.todoId,
      action: m.action,
      next_due_at: m.nextDueAt,
      consecutive_no_change: m.consecutiveNoChange,
      generation: m.generation,
      stop: m.stop,
    })),
    next_cli_actions: c.nextCliActions.map((a) => ({ argv: a.argv, why: a.why })),
    terminal: c.terminal,
  };
}
