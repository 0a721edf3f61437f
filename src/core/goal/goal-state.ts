import type { GoalEventBody } from "../events/goal/goal-events.js";
import { spendKey, type TurnEvent } from "../events/goal/turn-events.js";
import {
  type GoalState,
  initialState,
  newTodo,
  type TodoState,
  type VisionState,
} from "./goal-state-shape.js";
import { receiptMismatch } from "./receipt-rule.js";
import { applyMonitorFact, armMonitor, reopenMonitor } from "./turn/monitor.js";
import { evolveTurnLease, type TurnLeaseEvent } from "./turn/turn-lease.js";
import { evolveTurn, initialTurnState } from "./turn/turn-state.js";

export type {
  AcceptanceReceipt,
  Completion,
  GoalState,
  SpendRecord,
  TodoState,
  VisionState,
} from "./goal-state-shape.js";
export { DEFAULT_BUDGET, initialState, newTodo } from "./goal-state-shape.js";

/**
 * Folds one event into the state. Total (never throws), and it re-checks the lifecycle rules itself: an
 * event that breaks one (a completion without a matching receipt, a fifth status, a transition from the
 * wrong status) is not applied but kept as an anomaly, so even a forged log cannot close work.
 */
export function evolve(state: GoalState, event: GoalEventBody): GoalState {
  const s = { ...state, position: state.position + 1 };
  const at = state.position;
  const refuse = (why: string): GoalState => ({
    ...s,
    anomalies: [...s.anomalies, `event ${at} (${event.type}) not applied: ${why}`],
  });
  const todo = (id: string) => s.todos[id];
  const put = (t: TodoState, extra: Partial<GoalState> = {}): GoalState => ({
    ...s,
    ...extra,
    todos: { ...s.todos, [t.id]: t },
  });
  if (!state.created && event.type !== "goal_created") return refuse("the goal has not been created");
  switch (event.type) {
    case "goal_created": {
      if (state.created) return refuse("the goal already exists");
      const d = event.data;
      return {
        ...s,
        created: true,
        goalId: d.goal_id,
        objective: d.objective,
        acceptance: d.acceptance,
        workspace: d.workspace,
        agent: d.agent,
        budget: d.budget,
        revision: d.workspace.initial_revision,
        revisionHistory: [d.workspace.initial_revision],
      };
    }
    case "goal_activation_changed":
      return { ...s, activation: event.data.activation };
    case "goal_revision_recorded":
      if (event.data.previous !== state.revision)
        return refuse(`revision ${event.data.previous} is not the current ${state.revision}`);
      return {
        ...s,
        revision: event.data.revision,
        revisionHistory: [...s.revisionHistory, event.data.revision],
      };
    case "goal_acceptance_changed":
      return {
        ...s,
        acceptance: event.data.acceptance,
        acceptanceVersion: state.acceptanceVersion + 1,
        lastAnswerAt: at,
      };
    case "goal_budget_changed":
      return { ...s, budget: event.data.budget };
    case "goal_no_followup_declared": {
      const d = event.data;
      const noFollowup = {
        rationale: d.rationale,
        at,
        outcome: d.outcome ?? "achieved",
        cites: d.cites ?? null,
      };
      return { ...s, noFollowup, lastAnswerAt: at };
    }
    case "todo_added": {
      const spec = event.data.todo;
      if (todo(spec.id)) return refuse(`todo ${spec.id} already exists`);
      const pred = event.data.successor_of;
      const t = newTodo(spec, pred, at);
      const todos = { ...s.todos, [t.id]: t };
      if (pred) {
        const p = todos[pred];
        if (!p) return refuse(`successor_of ${pred} is not a todo`);
        todos[pred] = { ...p, successors: [...p.successors, t.id] };
      }
      const monitors =
        spec.class === "continuous_monitor" && spec.monitor
          ? { ...s.monitors, [t.id]: armMonitor(t.id, spec.monitor) }
          : s.monitors;
      // New work voids an earlier no_followup intent.
      return { ...s, todos, monitors, order: [...s.order, t.id], noFollowup: null };
    }
    case "todo_claimed": {
      const t = todo(event.data.todo_id);
      if (!t) return refuse("no such todo");
      return put({ ...t, claimedBy: event.data.agent_id });
    }
    case "todo_claim_released": {
      const t = todo(event.data.todo_id);
      if (!t || t.claimedBy !== event.data.agent_id) return refuse("not claimed by that agent");
      return put({ ...t, claimedBy: null });
    }
    case "todo_blocked": {
      const t = todo(event.data.todo_id);
      if (t?.status !== "open") return refuse("only an open todo can be blocked");
      return put({ ...t, status: "blocked", blockReason: event.data.reason });
    }
    case "todo_deferred": {
      const t = todo(event.data.todo_id);
      if (t?.status !== "open") return refuse("only an open todo can be deferred");
      return put({ ...t, status: "deferred", resumeWhen: event.data.resume_when });
    }
    case "todo_reopened": {
      const t = todo(event.data.todo_id);
      if (!t || (t.status !== "blocked" && t.status !== "deferred"))
        return refuse("only a blocked or deferred todo can be reopened");
      // A reopened monitor is due at once, its backoff and failure count started again (a person's reset).
      const m = s.monitors[t.id];
      const monitors = m ? { ...s.monitors, [t.id]: reopenMonitor(m) } : s.monitors;
      return put({ ...t, status: "open", resumeWhen: null, blockReason: null }, { monitors });
    }
    case "todo_superseded": {
      const t = todo(event.data.todo_id);
      const succ = todo(event.data.successor_id);
      if (!t || t.status === "done") return refuse("only an unfinished todo can be superseded");
      if (!succ || succ.successorOf !== t.id)
        return refuse("the successor must be added, linked to it, in the same append");
      return put({ ...t, status: "done", note: "superseded", supersededBy: succ.id, closedAt: at });
    }
    case "todo_closed_no_followup": {
      const t = todo(event.data.todo_id);
      if (!t || t.status === "done") return refuse("only an unfinished todo can be closed");
      return put({ ...t, status: "done", noFollowup: { rationale: event.data.rationale }, closedAt: at });
    }
    case "todo_attested": {
      const t = todo(event.data.todo_id);
      const d = event.data;
      if (!t) return refuse("no such todo");
      if (d.outcome === "blocker_accepted" && t.status !== "blocked")
        return refuse("only a blocked todo's blocker is accepted as its outcome");
      if (d.outcome === "done" && (t.status !== "open" || t.task !== null || !ATTESTABLE.includes(t.class)))
        return refuse("only an open user_action or task-less blocker is done on a person's word");
      const attestation = { outcome: d.outcome, note: d.note, by: d.by ?? null, evidence: d.evidence };
      return put({ ...t, status: "done", attestation, closedAt: at });
    }
    case "todo_completed": {
      const t = todo(event.data.todo_id);
      if (!t) return refuse("no such todo");
      const why = receiptMismatch(s, t, event.data.receipt);
      if (why) return refuse(why);
      const r = event.data.receipt;
      const completion = {
        runId: r.run_id,
        envelopeDigest: r.envelope_digest,
        goalRevision: r.goal_revision,
        taskDigest: r.task_digest,
      };
      return put(
        { ...t, status: "done", completion, closedAt: at },
        { evidenceRuns: { ...s.evidenceRuns, [r.run_id]: t.id } },
      );
    }
    case "acceptance_receipt_recorded": {
      const id = event.data.acceptance_id;
      const entry = { receipt: event.data.receipt, acceptanceVersion: state.acceptanceVersion, at };
      return {
        ...s,
        acceptanceReceipts: { ...s.acceptanceReceipts, [id]: [...(s.acceptanceReceipts[id] ?? []), entry] },
      };
    }
    case "gate_decided": {
      const t = todo(event.data.todo_id);
      if (t?.class !== "user_gate") return refuse("only a user gate is decided");
      if (t.status === "done") return refuse("the gate is already decided");
      return put({ ...t, status: "done", decision: event.data.decision, resumeWhen: null, closedAt: at });
    }
    case "vision_recorded":
    case "vision_patched":
    case "vision_unchanged_recorded": {
      const d = event.data;
      const prev = s.visions[d.agent_id];
      const route = "route" in d ? d.route : prev?.route;
      if (route === undefined) return refuse("no route recorded for this agent yet");
      if (event.type !== "vision_recorded" && prev && !isActiveVision(prev))
        return refuse(`the route of ${d.agent_id} is ${prev.last}; record a new one`);
      const last =
        event.type === "vision_recorded"
          ? "recorded"
          : event.type === "vision_patched"
            ? "patched"
            : "unchanged";
      const v: VisionState = {
        agentId: d.agent_id,
        route,
        checkpoint: d.checkpoint,
        at,
        last,
        supersededBy: null,
      };
      const answered = event.type === "vision_unchanged_recorded" ? { lastAnswerAt: at } : {};
      return { ...s, ...answered, visions: { ...s.visions, [d.agent_id]: v } };
    }
    case "vision_closed": {
      const d = event.data;
      const prev = s.visions[d.agent_id];
      if (!prev || !isActiveVision(prev)) return refuse("no followed vision of this agent to close");
      if (todo(d.successor_id)?.addedAt !== at - 1)
        return refuse("vision_closed needs its successor todo added just before it, in the same append");
      const v: VisionState = { ...prev, checkpoint: d.checkpoint, at, last: "closed" };
      return { ...s, visions: { ...s.visions, [d.agent_id]: v }, lastAnswerAt: at };
    }
    case "vision_retired": {
      const d = event.data;
      const prev = s.visions[d.agent_id];
      if (!prev || prev.last === "retired" || prev.last === "superseded")
        return refuse("no route of this agent is followed to retire");
      if (d.superseded_by !== null && !isActiveVision(s.visions[d.superseded_by]))
        return refuse(`the replacement route of ${d.superseded_by} is not recorded`);
      const last = d.superseded_by === null ? "retired" : "superseded";
      const v: VisionState = { ...prev, checkpoint: d.checkpoint, at, last, supersededBy: d.superseded_by };
      return { ...s, visions: { ...s.visions, [d.agent_id]: v }, lastAnswerAt: at };
    }
    case "replan_noop_recorded":
      return {
        ...s,
        replanNoops: [
          ...s.replanNoops,
          { agentId: event.data.agent_id, obligation: event.data.obligation, at },
        ],
      };
    case "replan_answered": {
      const d = event.data;
      if (state.replanOperations[d.operation_id])
        return refuse(`operation ${d.operation_id} already answered`);
      const entry = { outcome: d.outcome, obligation: d.obligation, at };
      return { ...s, replanOperations: { ...s.replanOperations, [d.operation_id]: entry } };
    }
    case "change_compensated": {
      const d = event.data;
      if (!state.revisionHistory.slice(1, -1).includes(d.reverted_revision))
        return refuse(`revision ${d.reverted_revision} is not an earlier revision of the goal workspace`);
      if (state.revision !== d.revert_revision)
        return refuse(`the revert commit ${d.revert_revision} is not the current revision ${state.revision}`);
      if (!todo(d.successor_id))
        return refuse(`the compensation's successor ${d.successor_id} is not a todo`);
      const c = {
        revertedRevision: d.reverted_revision,
        revertRevision: d.revert_revision,
        successorId: d.successor_id,
        at,
      };
      return { ...s, compensations: [...s.compensations, c], lastAnswerAt: at };
    }
    case "monitor_baseline_recorded":
    case "monitor_no_change_recorded":
    case "monitor_observation_recorded":
    case "monitor_successor_created":
    case "monitor_poll_failed":
    case "monitor_completed":
      return evolveMonitorFact(s, event, at, refuse);
    case "notification_due":
    case "notification_attempted":
    case "notification_sent":
    case "notification_failed":
      return s; // delivery facts: folded by core/goal/notify.ts, never part of the goal's own state
    case "quota_spent": {
      if (s.spends.some((x) => x.turnId === event.data.turn_id)) return refuse("turn already charged");
      const d = event.data;
      const spend = { turnId: d.turn_id, at: d.at, turns: d.turns, tokens: d.tokens, costUsd: d.cost_usd };
      return { ...s, spends: [...s.spends, spend] };
    }
    case "turn_lease_acquired":
    case "turn_lease_heartbeat":
    case "turn_lease_released":
      return { ...s, lease: evolveTurnLease(s.lease, event as TurnLeaseEvent) };
    case "turn_bound":
    case "turn_effect_prepared":
    case "turn_effect_readback":
    case "turn_host_executed":
    case "turn_typed_result":
    case "turn_validated":
    case "turn_writeback_accepted":
    case "turn_quota_spent":
    case "turn_scheduler_applied":
    case "turn_scheduler_acked":
    case "turn_scheduler_apply_failed":
    case "turn_rebased":
    case "turn_released":
    case "turn_failed": {
      const key = spendKey(event.data.identity);
      const prev = s.turns[key];
      if (event.type === "turn_bound") {
        if (prev) return refuse(`turn ${key} is already bound`);
        return {
          ...s,
          turns: { ...s.turns, [key]: evolveTurn(initialTurnState(), event as TurnEvent) },
          turnOrder: [...s.turnOrder, key],
        };
      }
      if (!prev) return refuse(`turn ${key} was never bound`);
      return { ...s, turns: { ...s.turns, [key]: evolveTurn(prev, event as TurnEvent) } };
    }
    default: {
      const never: never = event;
      return never;
    }
  }
}

/** A monitor fact: the monitor's own fold, plus the todo it completes and the replan it asks for. */
function evolveMonitorFact(
  s: GoalState,
  event: Extract<GoalEventBody, { type: `monitor_${string}` }>,
  at: number,
  refuse: (why: string) => GoalState,
): GoalState {
  const t = s.todos[event.data.todo_id];
  const m = s.monitors[event.data.todo_id];
  if (!t || !m) return refuse(`${event.data.todo_id} is not a continuous monitor`);
  if (t.status !== "open") return refuse(`monitor ${t.id} is ${t.status}`);
  const link = (id: string) => s.todos[id]?.successorOf === t.id && s.todos[id]?.addedAt === at - 1;
  const applied = applyMonitorFact(m, event, link);
  if (typeof applied === "string") return refuse(applied);
  const monitors = { ...s.monitors, [t.id]: applied };
  const monitorReplans =
    event.type === "monitor_no_change_recorded" && event.data.replan_requested
      ? { ...s.monitorReplans, [t.id]: at }
      : s.monitorReplans;
  if (event.type !== "monitor_completed") return { ...s, monitors, monitorReplans };
  const f = event.data.followup;
  const done: TodoState = {
    ...t,
    status: "done",
    closedAt: at,
    noFollowup: f.kind === "no_followup" ? { rationale: f.rationale } : null,
  };
  return { ...s, monitors, monitorReplans, todos: { ...s.todos, [t.id]: done } };
}

/** The classes a person's word (with evidence) can close: a step only a person takes, a task-less blocker. */
const ATTESTABLE: readonly TodoState["class"][] = ["user_action", "blocker"];

/** A route still followed: recorded and neither retired nor superseded. */
export function isActiveVision(v: VisionState | undefined): boolean {
  return v !== undefined && v.last !== "retired" && v.last !== "superseded";
}

/** Folds a whole event list. */
export function foldGoal(events: readonly GoalEventBody[]): GoalState {
  return events.reduce(evolve, initialState());
}
