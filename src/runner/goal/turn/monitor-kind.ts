import { effectRef, type TurnIdentity } from "../../../core/events/goal/turn-events.js";
import type { InteractionContract } from "../../../core/goal/contract.js";
import type { GoalState } from "../../../core/goal/goal-state-shape.js";
import { monitorOperation } from "../../../core/goal/monitor-goal.js";
import type { TurnState } from "../../../core/goal/turn/turn-state.js";
import {
  executeMonitorHost,
  executeMonitorWriteback,
  monitorUsage,
  readbackMonitorHost,
  readbackMonitorWriteback,
  recordMonitorTypedResult,
  recordMonitorValidation,
  todoOf,
} from "./monitor-step.js";
import type { TurnKind } from "./turn-kind.js";

/** A monitor to poll or complete now (a not-yet-due one is a quiet no-op: nothing runs, nothing is spent). */
export const dueMonitor = (c: InteractionContract) =>
  c.monitors.find((m) => m.action === "poll" || m.action === "complete") ?? null;

/** What a monitor turn did: the goal events its operation recorded; a successor is a change. */
function summary(s: GoalState, id: TurnIdentity, t: TurnState) {
  const op = monitorOperation(s, effectRef(id, "durable_writeback"));
  const types = op?.events.map((e) => e.type) ?? [];
  const failed = op?.events.find((e) => e.type === "monitor_poll_failed");
  const count = failed?.type === "monitor_poll_failed" ? failed.data.consecutive_failures : undefined;
  const stop =
    s.todos[todoOf(t)]?.status === "blocked" && count ? `; stopped after ${count} failed polls in a row` : "";
  return {
    result: `monitor ${todoOf(t)}: ${types.join(", ") || "nothing recorded"}${count ? ` (${count} in a row)` : ""}${stop}`,
    changed: types.includes("monitor_successor_created"),
  };
}

/** A continuous monitor's poll (monitor-step.ts): a todo turn whose todo is a monitor. */
export const monitorKind: TurnKind = {
  name: "monitor",
  select(_ctx, c) {
    const due = dueMonitor(c);
    return due
      ? { found: true, work: { kind: "todo", todo_id: due.todoId }, what: `monitor ${due.todoId}'s poll` }
      : { found: false, why: "no monitor is due" };
  },
  execute: executeMonitorHost,
  readback: (ctx, id, t, phase) =>
    phase === "host_execute" ? readbackMonitorHost(ctx, id, t) : readbackMonitorWriteback(ctx, id, t),
  typedResult: (ctx, id) => recordMonitorTypedResult(ctx, id),
  validate: (ctx, id) => recordMonitorValidation(ctx, id),
  writeback: executeMonitorWriteback,
  // A poll that observed is one turn and no tokens; a failed poll is charged nothing (monitor-step.ts).
  usage: async (ctx, id) => monitorUsage(ctx, id),
  summary,
  todoOf: (work) => (work.kind === "todo" ? work.todo_id : null),
};
