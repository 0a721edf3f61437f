import type { GoalEventBody, TodoSpec } from "../events/goal/goal-events.js";
import type { PollFailureKind } from "../events/goal/monitor-events.js";
import { checkSpec, fail, need } from "./command-checks.js";
import type { GoalState } from "./goal-state-shape.js";
import { conditionHolds } from "./todo-rules.js";
import {
  decideMonitor,
  type MonitorCommand,
  type MonitorEvent,
  type MonitorState,
  monitorPollAction,
  stoppedByFailures,
} from "./turn/monitor.js";

/**
 * The continuous monitor in the goal decider: the goal commands of a poll, a poll failure
 * and a completion, delegating the poll rules to decideMonitor. A material change is the observation and
 * the successor todo (a real `todo_added`, successor_of the monitor) in ONE decided batch under one
 * operation id; a retry of that operation id decides nothing (its receipt is replayed by readback:
 * `monitorOperation`); the same evidence cannot open a second generation.
 */
export type MonitorGoalCommand =
  | {
      type: "record_monitor_poll";
      todoId: string;
      operationId: string;
      now: Date;
      resultHash: string;
      /** For a changed hash: the generation it opens (the last + 1) and the successor it asks for. */
      generation?: number;
      successor?: TodoSpec;
    }
  | {
      type: "record_monitor_poll_failure";
      todoId: string;
      operationId: string;
      now: Date;
      failure: PollFailureKind;
      exitCode: number | null;
      detail: string;
    }
  | {
      type: "complete_monitor";
      todoId: string;
      operationId: string;
      now: Date;
      reason: string;
      followup: { kind: "successor"; successor: TodoSpec } | { kind: "no_followup"; rationale: string };
    };

/** What a host does with a monitor now. `complete`: expired or its resume_when (stop condition) holds. */
export type MonitorAction = "quiet_noop" | "poll" | "complete" | "done";

export interface MonitorSchedule {
  todoId: string;
  action: MonitorAction;
  /** When the next poll is due; null: due now (never polled yet) or nothing more to poll. */
  nextDueAt: string | null;
  consecutiveNoChange: number;
  /** Polls in a row with no material change: the backoff step of the next wait. */
  quietPolls: number;
  /** Failed polls in a row, and how many stop the monitor. */
  consecutiveFailures: number;
  maxFailures: number;
  generation: number;
  /** Why `complete`, when it is. */
  stop: string | null;
}

/** Where one monitor stands at `now`. A not-yet-due monitor is a quiet no-op, never advancement work. */
export function monitorSchedule(state: GoalState, todoId: string, now: Date): MonitorSchedule | null {
  const m = state.monitors[todoId];
  const t = state.todos[todoId];
  if (!m || !t) return null;
  let action: MonitorAction = t.status === "done" ? "done" : monitorPollAction(m, now);
  let stop: string | null = action === "complete" ? `expired at ${m.policy.expiresAt}` : null;
  const cond = t.monitor?.resume_when;
  if ((action === "poll" || action === "quiet_noop") && cond && conditionHolds(state, cond, now)) {
    action = "complete";
    stop = "its resume_when holds";
  }
  const live = action === "poll" || action === "quiet_noop";
  return {
    todoId: todoId,
    action,
    nextDueAt: live && m.nextDueAt ? m.nextDueAt : null,
    consecutiveNoChange: m.consecutiveNoChange,
    quietPolls: m.quietPolls,
    consecutiveFailures: m.consecutiveFailures,
    maxFailures: m.policy.maxFailures,
    generation: m.materialChangeGeneration,
    stop,
  };
}

/**
 * The monitors stopped by their failed polls: blocked (by the failure that reached max_failures) and never
 * polled again until a person repairs what the poll runs and reopens the todo (or closes it). A person's
 * action, so the goal asks for it (runtime-state.ts); never a silent stop, never an endless retry.
 */
export function monitorsStoppedByFailures(state: GoalState): { todoId: string; detail: string }[] {
  return state.order.flatMap((id) => {
    const t = state.todos[id];
    const m = state.monitors[id];
    if (t?.status !== "blocked" || !m || !stoppedByFailures(m)) return [];
    return [
      {
        todoId: id,
        detail: `${t.blockReason ?? `its last ${m.consecutiveFailures} polls failed`}; repair what the poll runs, then reopen it (or close it with no_followup)`,
      },
    ];
  });
}

/** The block that stops a monitor whose failed polls reached its bound, or none yet. */
function failureStop(m: MonitorState, events: readonly MonitorEvent[]): GoalEventBody[] {
  const f = events.find((e) => e.type === "monitor_poll_failed");
  if (f?.type !== "monitor_poll_failed") return [];
  const n = f.data.consecutive_failures ?? m.consecutiveFailures + 1;
  if (n < m.policy.maxFailures) return [];
  return [
    {
      type: "todo_blocked",
      data: {
        todo_id: f.data.todo_id,
        reason:
          `rule monitor_failures: ${n} polls failed in a row (max_failures ${m.policy.maxFailures}); the last: ${f.data.failure}: ${f.data.detail}`.slice(
            0,
            1000,
          ),
      },
    },
  ];
}

/** Every open monitor of the goal, in todo order (a blocked or deferred monitor is not polled). */
export function monitorSchedules(state: GoalState, now: Date): MonitorSchedule[] {
  return state.order.flatMap((id) => {
    const s = state.todos[id]?.status !== "open" ? null : monitorSchedule(state, id, now);
    return s ? [s] : [];
  });
}

/** The recorded facts of a monitor operation, or null: the readback of a monitor turn's writeback. */
export function monitorOperation(
  state: GoalState,
  operationId: string,
): { todo_id: string; events: MonitorEvent[] } | null {
  for (const m of Object.values(state.monitors)) {
    const events = m.operations[operationId];
    if (events) return { todo_id: m.todoId, events };
  }
  return null;
}

/** The successor a material change asks for when the caller names none: a person looks at what changed. */
export function defaultMonitorSuccessor(state: GoalState, todoId: string, generation: number): TodoSpec {
  const t = state.todos[todoId];
  const id = `${todoId.slice(0, 58)}_g${generation}`;
  return {
    id,
    class: "user_action",
    content:
      `Monitor ${todoId} observed a material change (generation ${generation}): ${t?.content ?? ""}`.slice(
        0,
        4000,
      ),
  };
}

/** A poll's typed result as the host saw it (runner/goal/monitor-poll.ts's PollResult has this shape). */
export type PollObservation =
  | { ok: true; result_hash: string }
  | { ok: false; failure: PollFailureKind; exit_code: number | null; detail: string };

/**
 * The goal command that records a poll: a failure as a failure; a hash against the monitor's state (the
 * baseline, a no-change, or a material change opening the next generation with `successor`, by default
 * `defaultMonitorSuccessor`). Pure; the decider still checks every rule when it is decided.
 */
export function monitorPollCommand(
  state: GoalState,
  todoId: string,
  operationId: string,
  now: Date,
  poll: PollObservation,
  successor?: TodoSpec,
): MonitorGoalCommand {
  const base = { todoId, operationId, now };
  if (!poll.ok)
    return {
      type: "record_monitor_poll_failure",
      ...base,
      failure: poll.failure,
      exitCode: poll.exit_code,
      detail: poll.detail,
    };
  const m = state.monitors[todoId];
  const changed = m !== undefined && m.resultHash !== null && m.resultHash !== poll.result_hash;
  if (!changed) return { type: "record_monitor_poll", ...base, resultHash: poll.result_hash };
  const generation = (m?.materialChangeGeneration ?? 0) + 1;
  return {
    type: "record_monitor_poll",
    ...base,
    resultHash: poll.result_hash,
    generation,
    successor: successor ?? defaultMonitorSuccessor(state, todoId, generation),
  };
}

function monitorOf(state: GoalState, cmd: MonitorGoalCommand): MonitorState {
  const t = need(state, cmd.todoId, cmd.type);
  if (t.class !== "continuous_monitor")
    fail(`${cmd.type}: ${t.id} is a ${t.class}, not a continuous_monitor`);
  if (t.status === "blocked" || t.status === "deferred")
    fail(`${cmd.type}: monitor ${t.id} is ${t.status}; only an open monitor is polled`);
  return state.monitors[t.id] ?? fail(`${cmd.type}: ${t.id} has no monitor poll`);
}

export function decideMonitorCommand(cmd: MonitorGoalCommand, state: GoalState): GoalEventBody[] {
  const m = monitorOf(state, cmd);
  const other = monitorOperation(state, cmd.operationId);
  if (other && other.todo_id !== cmd.todoId)
    fail(
      `${cmd.type}: rule operation_once: operation ${cmd.operationId} belongs to monitor ${other.todo_id}`,
    );
  if (other) return []; // a retry: the operation's receipt is already in the stream, nothing new is decided
  const sched = monitorSchedule(state, cmd.todoId, cmd.now);
  if (sched?.action === "done")
    fail(`${cmd.type}: rule monitor_completed: monitor ${cmd.todoId} is completed`);
  if (cmd.type !== "complete_monitor" && sched?.action === "complete")
    fail(
      `${cmd.type}: rule monitor_stop: monitor ${cmd.todoId} ${sched.stop}: complete it with a successor or no_followup`,
    );
  const wrap = (mc: MonitorCommand): MonitorEvent[] => {
    try {
      return decideMonitor(mc, m);
    } catch (e) {
      return fail(`${cmd.type}: ${(e as Error).message}`);
    }
  };
  switch (cmd.type) {
    case "record_monitor_poll": {
      const changed = m.resultHash !== null && cmd.resultHash !== m.resultHash;
      if (changed && cmd.successor) checkSpec(state, cmd.successor, cmd.type);
      const events = wrap({
        type: "record_poll",
        operationId: cmd.operationId,
        now: cmd.now,
        resultHash: cmd.resultHash,
        ...(cmd.generation !== undefined ? { generation: cmd.generation } : {}),
        ...(cmd.successor
          ? { successor: { todo_id: cmd.successor.id, content: cmd.successor.content } }
          : {}),
      });
      return events.flatMap((e): GoalEventBody[] => {
        if (e.type === "monitor_armed") return [];
        if (e.type === "monitor_successor_created" && cmd.successor)
          return [{ type: "todo_added", data: { todo: cmd.successor, successor_of: cmd.todoId } }, e];
        return [e];
      });
    }
    case "record_monitor_poll_failure": {
      const { operationId: operation_id, now, failure, exitCode: exit_code, detail } = cmd;
      const mc: MonitorCommand = {
        type: "record_poll_failure",
        operationId: operation_id,
        now,
        failure,
        exitCode: exit_code,
        detail: detail.slice(0, 2000),
      };
      const events = wrap(mc);
      // At max_failures the same append blocks the monitor's todo: it polls no more until a person reopens it.
      return [
        ...events.filter((e): e is Extract<MonitorEvent, GoalEventBody> => e.type !== "monitor_armed"),
        ...failureStop(m, events),
      ];
    }
    case "complete_monitor": {
      const f = cmd.followup;
      if (f.kind === "successor") checkSpec(state, f.successor, cmd.type);
      const events = wrap({
        type: "complete",
        operationId: cmd.operationId,
        now: cmd.now,
        reason: cmd.reason.slice(0, 2000),
        followup:
          f.kind === "successor"
            ? { kind: "successor", successor: { todo_id: f.successor.id, content: f.successor.content } }
            : { kind: "no_followup", rationale: f.rationale.slice(0, 2000) },
      }).filter((e): e is Extract<MonitorEvent, GoalEventBody> => e.type !== "monitor_armed");
      return f.kind === "successor"
        ? [{ type: "todo_added", data: { todo: f.successor, successor_of: cmd.todoId } }, ...events]
        : events;
    }
  }
}

/**
 * The times the scheduler's `nextWakeUp` reads as `monitorDue`: now for a monitor to poll or complete,
 * its next_due_at for one not yet due. A completed monitor wakes nothing.
 */
export function monitorDueTimes(monitors: readonly MonitorSchedule[], now: Date): string[] {
  return monitors.flatMap((m) => {
    if (m.action === "done") return [];
    if (m.action === "quiet_noop" && m.nextDueAt) return [m.nextDueAt];
    return [now.toISOString()];
  });
}
