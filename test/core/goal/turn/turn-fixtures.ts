import type { TurnEvent, TurnIdentity } from "../../../../src/core/events/goal/turn-events.js";

/** Hand-written facts of one turn; refs are spelled out, not computed by the code under test. */
export const ID: TurnIdentity = { goal_id: "goal_csv", agent_id: "builder", turn_instance_id: "t1" };
export const OTHER: TurnIdentity = { ...ID, turn_instance_id: "t0" };
export const HX = "goal_csv/builder/t1#host_execute";
export const WB = "goal_csv/builder/t1#durable_writeback";
export const SA = "goal_csv/builder/t1#scheduler_apply";
export const KEY = "goal_csv/builder/t1";
export const REV = "rev_a";
export const ENVELOPE = {
  kind: "envelope" as const,
  run_id: "run_1",
  task_id: "parse",
  status: "SUCCESS",
  envelope_digest: "env_1",
};
export const RECEIPT = {
  kind: "run" as const,
  receipt: {
    run_id: "run_1",
    task_id: "parse",
    task_digest: "td",
    status: "SUCCESS" as const,
    envelope_digest: "env_1",
    goal_id: "goal_csv",
    goal_revision: REV,
  },
};
export const USAGE = { tokens: 1200, cost_usd: 0.02, turns: 1 };
export const HINT = { action: "run_now", not_before: "2026-12-01T10:00:00.000Z", why: "next todo" };

export const bound: TurnEvent = {
  type: "turn_bound",
  data: { identity: ID, work: { kind: "todo", todo_id: "todo_parse" }, base_revision: REV },
};
export const hxPrepared: TurnEvent = {
  type: "turn_effect_prepared",
  data: { identity: ID, phase: "host_execute", effect_ref: HX },
};
export const executed: TurnEvent = {
  type: "turn_host_executed",
  data: { identity: ID, effect_ref: HX, run_ref: "run_1" },
};
export const typed: TurnEvent = { type: "turn_typed_result", data: { identity: ID, result: ENVELOPE } };
export const validated: TurnEvent = { type: "turn_validated", data: { identity: ID, receipt: RECEIPT } };
export const wbPrepared: TurnEvent = {
  type: "turn_effect_prepared",
  data: { identity: ID, phase: "durable_writeback", effect_ref: WB },
};
export const written: TurnEvent = {
  type: "turn_writeback_accepted",
  data: { identity: ID, effect_ref: WB, commit: "c1", new_revision: "rev_b" },
};
export const spent: TurnEvent = {
  type: "turn_quota_spent",
  data: { identity: ID, spend_key: KEY, usage: USAGE },
};
export const applied: TurnEvent = {
  type: "turn_scheduler_applied",
  data: { identity: ID, effect_ref: SA, hint: HINT },
};
export const acked: TurnEvent = {
  type: "turn_scheduler_acked",
  data: { identity: ID, effect_ref: SA, mode: "host_updated" },
};

/** The uninterrupted turn, fact by fact. */
export const FULL: TurnEvent[] = [
  bound,
  hxPrepared,
  executed,
  typed,
  validated,
  wbPrepared,
  written,
  spent,
  applied,
  acked,
];
