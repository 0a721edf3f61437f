import {
  type AcceptanceItem,
  type Budget,
  type ClosureOutcome,
  GOAL_LIMITS,
  type GoalAgent,
  type GoalEventBody,
  type GoalEventData,
  type GoalWorkspace,
  TODO_STATUSES,
  type TodoSpec,
  type ValidationReceipt,
} from "../events/goal/goal-events.js";
import type { NotifyTarget } from "../events/goal/notify-events.js";
import { boundText } from "../kernel/bounded.js";
import type { Decider } from "../kernel/decider.js";
import {
  type AcceptanceCommand,
  acceptanceListRefusal,
  closureIntentRefusal,
  decideAcceptanceChange,
} from "./acceptance-change.js";
import { type AttestCommand, decideAttest } from "./attest.js";
import { checkSpec, fail, need, resumeCondition } from "./command-checks.js";
import { type CompleteTodoCommand, completeTodo } from "./completion.js";
import { evolve } from "./goal-state.js";
import { type GoalState, initialState } from "./goal-state-shape.js";
import { decideMonitorCommand, type MonitorGoalCommand } from "./monitor-goal.js";
import { decideReplan, type ReplanCommand } from "./replan.js";
import { decideVision, type VisionCommand } from "./vision.js";

/** What a goal file declares; `create_goal` turns it into `goal_created` plus one `todo_added` per todo. */
export interface GoalSpec {
  goalId: string;
  objective: string;
  acceptance: AcceptanceItem[];
  workspace: GoalWorkspace;
  agent: GoalAgent;
  budget: Budget;
  todos: TodoSpec[];
  source?: { path: string; digest: string };
  /** The agent's first route (the goal file's `vision`): recorded with the goal, its first checkpoint. */
  vision?: string;
  /** The goal file's `notify:` targets, resolved (core/goal/notify-targets.ts). */
  notify?: NotifyTarget[];
}

/** The commands the goal decider accepts. Every refusal is a DomainError whose message names the rule. */
export type GoalCommand =
  | { type: "create_goal"; goal: GoalSpec }
  | { type: "stop_goal"; note?: string }
  | { type: "resume_goal"; note?: string }
  /** The goal workspace moved (an accepted change was committed); `previous` must be the current one. */
  | { type: "record_revision"; revision: string; previous: string; reason: string; turnId?: string }
  | { type: "change_acceptance"; acceptance: AcceptanceItem[]; reason: string }
  | { type: "change_budget"; budget: Budget; reason: string }
  /** The closure intent; `outcome` (default achieved) and what it `cites`: see acceptance-change.ts. */
  | {
      type: "declare_no_followup";
      rationale: string;
      outcome?: ClosureOutcome;
      cites?: string;
    }
  | AcceptanceCommand
  | AttestCommand
  | { type: "add_todo"; todo: TodoSpec; successorOf?: string }
  | { type: "claim_todo"; todoId: string; agentId: string }
  | { type: "release_todo"; todoId: string; agentId: string }
  | { type: "block_todo"; todoId: string; reason: string }
  /** `resume_when` is validated here: a deferral needs a machine-readable condition. */
  | { type: "defer_todo"; todoId: string; resumeWhen: unknown; note?: string }
  | { type: "reopen_todo"; todoId: string; note?: string }
  | { type: "supersede_todo"; todoId: string; successor: TodoSpec; reason?: string }
  | { type: "close_no_followup"; todoId: string; rationale: string }
  | CompleteTodoCommand
  | { type: "record_acceptance"; acceptanceId: string; receipt: ValidationReceipt }
  | { type: "decide_gate"; todoId: string; decision: "approve" | "reject" | "cancel"; note?: string }
  | { type: "defer_gate"; todoId: string; resumeWhen: unknown; note?: string }
  /** A raw status write, as a careless client would send it: routed to the lifecycle, or refused. */
  | { type: "set_todo_status"; todoId: string; status: string; reason?: string; resumeWhen?: unknown }
  | { type: "delete_todo"; todoId: string }
  | VisionCommand
  | MonitorGoalCommand
  | ReplanCommand
  | { type: "record_spend"; turnId: string; at: string; turns: number; tokens: number; costUsd: number };

const bound = (s: string | undefined, max: number = GOAL_LIMITS.reason) => boundText(s ?? "", max);

function decideGoal(command: GoalCommand, state: GoalState): GoalEventBody[] {
  if (command.type === "create_goal") {
    if (state.created) fail(`create_goal: goal ${state.goalId} already exists`);
    const g = command.goal;
    if (g.acceptance.length === 0)
      fail("create_goal: acceptance must list at least one task or gate (an empty queue is never proof)");
    const ids = new Set<string>();
    for (const a of g.acceptance) {
      if (ids.has(a.id)) fail(`create_goal: acceptance id ${a.id} appears twice`);
      ids.add(a.id);
    }
    const created: GoalEventData<"goal_created"> = {
      goal_id: g.goalId,
      objective: g.objective,
      acceptance: g.acceptance,
      workspace: g.workspace,
      agent: g.agent,
      budget: g.budget,
      ...(g.source ? { source: g.source } : {}),
      ...(g.notify?.length ? { notify: g.notify } : {}),
    };
    const events: GoalEventBody[] = [{ type: "goal_created", data: created }];
    const seen = new Set<string>();
    let s = evolve(state, events[0] as GoalEventBody);
    for (const spec of g.todos) {
      if (seen.has(spec.id)) fail(`create_goal: todo ${spec.id} appears twice`);
      seen.add(spec.id);
      checkSpec(s, spec, "create_goal", g.todos);
      const e: GoalEventBody = { type: "todo_added", data: { todo: spec, successor_of: null } };
      events.push(e);
      s = evolve(s, e);
    }
    if (g.vision !== undefined)
      events.push(...decideVision({ type: "record_vision", agentId: g.agent.agent_id, route: g.vision }, s));
    return events;
  }
  if (!state.created) fail(`${command.type}: the goal does not exist yet (create it first)`);
  switch (command.type) {
    case "stop_goal":
      if (state.activation === "stopped") fail("stop_goal: the goal is already stopped");
      return [
        { type: "goal_activation_changed", data: { activation: "stopped", note: bound(command.note) } },
      ];
    case "resume_goal":
      if (state.activation === "active") fail("resume_goal: the goal is already active");
      return [{ type: "goal_activation_changed", data: { activation: "active", note: bound(command.note) } }];
    case "record_revision":
      if (command.previous !== state.revision)
        fail(
          `record_revision: rule needs_rebase: the goal workspace is at ${state.revision}, not ${command.previous}`,
        );
      if (command.revision === state.revision) fail("record_revision: the revision did not change");
      return [
        {
          type: "goal_revision_recorded",
          data: {
            revision: command.revision,
            previous: command.previous,
            reason: bound(command.reason),
            ...(command.turnId ? { turn_id: command.turnId } : {}),
          },
        },
      ];
    case "change_acceptance": {
      const refusal = acceptanceListRefusal(command.acceptance, "change_acceptance");
      if (refusal) fail(refusal);
      return [
        {
          type: "goal_acceptance_changed",
          data: { acceptance: command.acceptance, reason: bound(command.reason) },
        },
      ];
    }
    case "add_acceptance":
    case "retire_acceptance":
      return decideAcceptanceChange(command, state);
    case "attest_todo":
      return decideAttest(command, state);
    case "change_budget":
      return [
        { type: "goal_budget_changed", data: { budget: command.budget, reason: bound(command.reason) } },
      ];
    case "declare_no_followup": {
      if (!command.rationale.trim()) fail("declare_no_followup: a no_followup intent needs a rationale");
      const outcome = command.outcome ?? "achieved";
      const refusal = closureIntentRefusal(state, outcome, command.cites);
      if (refusal) fail(refusal);
      const data = {
        rationale: bound(command.rationale),
        ...(command.outcome ? { outcome } : {}),
        ...(command.cites ? { cites: command.cites } : {}),
      };
      return [{ type: "goal_no_followup_declared", data }];
    }
    case "add_todo": {
      checkSpec(state, command.todo, "add_todo");
      if (command.successorOf !== undefined) need(state, command.successorOf, "add_todo");
      return [
        { type: "todo_added", data: { todo: command.todo, successor_of: command.successorOf ?? null } },
      ];
    }
    case "claim_todo": {
      const t = need(state, command.todoId, "claim_todo");
      if (t.status !== "open") fail(`claim_todo: ${t.id} is ${t.status}; only an open todo is claimed`);
      if (t.claimedBy === command.agentId)
        fail(`claim_todo: ${t.id} is already claimed by ${command.agentId}`);
      if (t.claimedBy !== null)
        fail(
          `claim_todo: rule claim_held: ${t.id} is claimed by ${t.claimedBy}; it releases it first (todo release --by ${t.claimedBy})`,
        );
      if (!command.agentId.trim() || command.agentId.length > GOAL_LIMITS.name)
        fail(`claim_todo: a claim names who takes it (1 to ${GOAL_LIMITS.name} characters)`);
      return [{ type: "todo_claimed", data: { todo_id: t.id, agent_id: command.agentId } }];
    }
    case "release_todo": {
      const t = need(state, command.todoId, "release_todo");
      if (t.claimedBy !== command.agentId)
        fail(
          `release_todo: ${t.id} is not claimed by ${command.agentId} (claimed by ${t.claimedBy ?? "nobody"})`,
        );
      return [{ type: "todo_claim_released", data: { todo_id: t.id, agent_id: command.agentId } }];
    }
    case "block_todo": {
      const t = need(state, command.todoId, "block_todo");
      if (t.status !== "open") fail(`block_todo: ${t.id} is ${t.status}; only an open todo can be blocked`);
      if (!command.reason.trim()) fail(`block_todo: blocking ${t.id} needs a reason`);
      return [{ type: "todo_blocked", data: { todo_id: t.id, reason: bound(command.reason) } }];
    }
    case "defer_todo":
    case "defer_gate": {
      const t = need(state, command.todoId, command.type);
      if (command.type === "defer_gate" && t.class !== "user_gate")
        fail(`defer_gate: ${t.id} is a ${t.class}, not a user_gate`);
      const cond = resumeCondition(state, command.resumeWhen, t.id, command.type);
      const deferred: GoalEventBody = {
        type: "todo_deferred",
        data: { todo_id: t.id, resume_when: cond, note: bound(command.note) },
      };
      // A deferred gate asked again (or not yet) is deferred anew: reopened and deferred in one append.
      if (command.type === "defer_gate" && t.status === "deferred")
        return [{ type: "todo_reopened", data: { todo_id: t.id, note: "deferred again" } }, deferred];
      if (t.status !== "open")
        fail(`${command.type}: ${t.id} is ${t.status}; only an open todo can be deferred`);
      return [deferred];
    }
    case "reopen_todo": {
      const t = need(state, command.todoId, "reopen_todo");
      if (t.status === "done")
        fail(
          `reopen_todo: ${t.id} is done; done is terminal (supersede it with a successor, or add a new todo)`,
        );
      if (t.status === "open") fail(`reopen_todo: ${t.id} is already open`);
      return [{ type: "todo_reopened", data: { todo_id: t.id, note: bound(command.note) } }];
    }
    case "supersede_todo": {
      const t = need(state, command.todoId, "supersede_todo");
      if (t.status === "done")
        fail(`supersede_todo: ${t.id} is already done; a compensation and a new todo replace accepted work`);
      checkSpec(state, command.successor, "supersede_todo");
      return [
        { type: "todo_added", data: { todo: command.successor, successor_of: t.id } },
        {
          type: "todo_superseded",
          data: {
            todo_id: t.id,
            successor_id: command.successor.id,
            note: "superseded",
            reason: bound(command.reason),
          },
        },
      ];
    }
    case "close_no_followup": {
      const t = need(state, command.todoId, "close_no_followup");
      if (t.status === "done") fail(`close_no_followup: ${t.id} is already done`);
      if (!command.rationale.trim())
        fail(`close_no_followup: rule no_followup_needs_rationale: closing ${t.id} needs a rationale`);
      return [
        { type: "todo_closed_no_followup", data: { todo_id: t.id, rationale: bound(command.rationale) } },
      ];
    }
    case "complete_todo":
      return completeTodo(command, state);
    case "record_acceptance": {
      const item =
        state.acceptance.find((a) => a.id === command.acceptanceId) ??
        fail(`record_acceptance: ${command.acceptanceId} is not an acceptance item of goal ${state.goalId}`);
      const r = command.receipt;
      if (r.goal_id !== state.goalId)
        fail(`record_acceptance: rule receipt_matches_goal: run ${r.run_id} was for goal ${r.goal_id}`);
      if (r.task_digest !== item.digest)
        fail(
          `record_acceptance: rule receipt_matches_task: run ${r.run_id} ran ${r.task_id} (digest ${r.task_digest}), not acceptance ${item.id} (digest ${item.digest})`,
        );
      return [{ type: "acceptance_receipt_recorded", data: { acceptance_id: item.id, receipt: r } }];
    }
    case "decide_gate": {
      const t = need(state, command.todoId, "decide_gate");
      if (t.class !== "user_gate") fail(`decide_gate: ${t.id} is a ${t.class}, not a user_gate`);
      if (t.status === "done")
        fail(
          `decide_gate: ${t.id} is already ${t.decision ?? (t.note === "superseded" ? "superseded" : "closed")}`,
        );
      const decision = ({ approve: "approved", reject: "rejected", cancel: "cancelled" } as const)[
        command.decision
      ];
      return [{ type: "gate_decided", data: { todo_id: t.id, decision, note: bound(command.note) } }];
    }
    case "set_todo_status":
      return setStatus(command, state);
    case "delete_todo": {
      const t = need(state, command.todoId, "delete_todo");
      if (t.note === "superseded")
        fail(
          `delete_todo: rule superseded_is_history: ${t.id} was superseded by ${t.supersededBy}; a superseded todo is history and is never deleted`,
        );
      return fail(
        `delete_todo: rule todos_are_never_deleted: close ${t.id} with a no_followup rationale, or supersede it`,
      );
    }
    case "record_vision":
    case "patch_vision":
    case "record_vision_unchanged":
    case "retire_vision":
    case "supersede_vision":
      return decideVision(command, state);
    case "record_monitor_poll":
    case "record_monitor_poll_failure":
    case "complete_monitor":
      return decideMonitorCommand(command, state);
    case "answer_replan":
    case "compensate_change":
      return decideReplan(command, state);
    case "record_spend": {
      if (state.spends.some((s) => s.turnId === command.turnId))
        fail(`record_spend: rule spend_once: turn ${command.turnId} is already charged`);
      const { turnId: turn_id, at, turns, tokens, costUsd: cost_usd } = command;
      return [{ type: "quota_spent", data: { turn_id, at, turns, tokens, cost_usd } }];
    }
    default: {
      const never: never = command;
      return never;
    }
  }
}

function setStatus(command: Extract<GoalCommand, { type: "set_todo_status" }>, state: GoalState) {
  const t = need(state, command.todoId, "set_todo_status");
  const status = command.status;
  if (status === "running" || status === "in_progress" || status === "claimed")
    fail(
      `set_todo_status: rule running_is_derived: "${status}" is never stored; running is derived from the selection, the lease and the run history, and a claim is only a routing signal`,
    );
  if (!(TODO_STATUSES as readonly string[]).includes(status))
    fail(
      `set_todo_status: rule four_statuses: a todo status is exactly one of ${TODO_STATUSES.join(" | ")}, not "${status}"`,
    );
  switch (status) {
    case "done":
      return fail(
        `set_todo_status: rule done_needs_receipt: ${t.id} becomes done only on evidence (todo done --evidence RUN_ID), a gate decision, a supersede or a no_followup rationale`,
      );
    case "open":
      return decideGoal({ type: "reopen_todo", todoId: t.id }, state);
    case "blocked":
      return decideGoal({ type: "block_todo", todoId: t.id, reason: command.reason ?? "" }, state);
    default:
      return decideGoal({ type: "defer_todo", todoId: t.id, resumeWhen: command.resumeWhen }, state);
  }
}

/** The goal decider: one stream per goal; `decide` refuses every forbidden transition, naming the rule. */
export const goalDecider: Decider<GoalState, GoalCommand, GoalEventBody> = {
  initialState,
  evolve,
  decide: decideGoal,
};
export { decideGoal as decide };
