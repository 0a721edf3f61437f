import type { z } from "zod";
import type {
  MonitorFollowup,
  MonitorGoalEvent,
  MonitorSuccessor,
  PollFailureKind,
} from "../../events/goal/monitor-events.js";
import type { Decider } from "../../kernel/decider.js";
import { DomainError } from "../../kernel/errors.js";

/**
 * A continuous monitor's poll rules, pure. Before next_due_at a poll is a quiet no-op;
 * due and the same result_hash is a no-change receipt; a changed hash is a material change whose
 * observation and successor are one decided batch under one operation id (a retry replays, never a
 * second successor; the generation must advance); expiry or a stop completes the monitor with a
 * successor or no_followup. The first poll records the baseline hash.
 */
export interface MonitorPolicy {
  cadence_seconds: number;
  expires_at?: string;
  max_no_change_before_replan?: number;
}

export type SuccessorSpec = z.infer<typeof MonitorSuccessor>;
export type Followup = z.infer<typeof MonitorFollowup>;

export interface MonitorState {
  todo_id: string;
  policy: MonitorPolicy;
  /** "" before the first poll: due at once. */
  next_due_at: string;
  last_checked_at: string | null;
  result_hash: string | null;
  consecutive_no_change: number;
  material_change_generation: number;
  /** operation id → the events it decided (the durable operation receipt). */
  operations: Record<string, MonitorEvent[]>;
  successors: Record<number, string>;
  /** The last poll asked for a replan (max_no_change_before_replan reached). */
  replan_requested: boolean;
  completed: Followup | null;
}

type Op = { todo_id: string; operation_id: string; at: string };
/** `monitor_armed` is the monitor's own start (in the goal stream: the todo's `todo_added`); the rest are goal facts. */
export type MonitorEvent =
  | { type: "monitor_armed"; data: { todo_id: string; policy: MonitorPolicy; next_due_at: string } }
  | MonitorGoalEvent;

export type MonitorCommand =
  | { kind: "arm"; todo_id: string; policy: MonitorPolicy; now: string }
  | {
      kind: "record_poll";
      operation_id: string;
      now: string;
      result_hash: string;
      /** Required when the hash changed: the generation this change opens (last + 1) and the work it asks for. */
      generation?: number;
      successor?: SuccessorSpec;
    }
  | {
      kind: "record_poll_failure";
      operation_id: string;
      now: string;
      failure: PollFailureKind;
      exit_code: number | null;
      detail: string;
    }
  | { kind: "complete"; operation_id: string; now: string; reason: string; followup: Followup };

/** A refused monitor command; a DomainError (exit 1 in the CLI) whose message names the rule. */
export class MonitorRefusal extends DomainError {
  readonly rule: string;
  constructor(rule: string, message: string) {
    super(`rule ${rule}: ${message}`);
    this.rule = rule;
  }
}

export function initialMonitorState(): MonitorState {
  return {
    todo_id: "",
    policy: { cadence_seconds: 1 },
    next_due_at: "",
    last_checked_at: null,
    result_hash: null,
    consecutive_no_change: 0,
    material_change_generation: 0,
    operations: {},
    successors: {},
    replan_requested: false,
    completed: null,
  };
}

const plus = (t: string, s: number) => new Date(Date.parse(t) + s * 1000).toISOString();
const before = (a: string, b: string) => Date.parse(a) < Date.parse(b);

export function evolveMonitor(s: MonitorState, e: MonitorEvent): MonitorState {
  const ops = (d: Op) => ({
    ...s.operations,
    [d.operation_id]: [...(s.operations[d.operation_id] ?? []), e],
  });
  switch (e.type) {
    case "monitor_armed":
      return {
        ...initialMonitorState(),
        todo_id: e.data.todo_id,
        policy: e.data.policy,
        next_due_at: e.data.next_due_at,
      };
    case "monitor_baseline_recorded":
      return {
        ...s,
        operations: ops(e.data),
        result_hash: e.data.result_hash,
        last_checked_at: e.data.at,
        next_due_at: e.data.next_due_at,
      };
    case "monitor_no_change_recorded":
      return {
        ...s,
        operations: ops(e.data),
        last_checked_at: e.data.at,
        consecutive_no_change: e.data.consecutive_no_change,
        replan_requested: e.data.replan_requested,
        next_due_at: e.data.next_due_at,
      };
    case "monitor_poll_failed":
      return { ...s, operations: ops(e.data), last_checked_at: e.data.at, next_due_at: e.data.next_due_at };
    case "monitor_observation_recorded":
      return {
        ...s,
        operations: ops(e.data),
        last_checked_at: e.data.at,
        result_hash: e.data.result_hash,
        consecutive_no_change: 0,
        replan_requested: false,
        material_change_generation: e.data.generation,
        next_due_at: e.data.next_due_at,
      };
    case "monitor_successor_created":
      return {
        ...s,
        operations: ops(e.data),
        successors: { ...s.successors, [e.data.generation]: e.data.successor.todo_id },
      };
    case "monitor_completed":
      return { ...s, operations: ops(e.data), completed: e.data.followup };
  }
}

/** A monitor as armed by the `todo_added` of its continuous_monitor todo: due at once (the baseline poll). */
export function armMonitor(
  todo_id: string,
  spec: { cadence_seconds: number; expires_at?: string; max_no_change_before_replan?: number },
): MonitorState {
  const policy: MonitorPolicy = { cadence_seconds: spec.cadence_seconds };
  if (spec.expires_at) policy.expires_at = spec.expires_at;
  if (spec.max_no_change_before_replan) policy.max_no_change_before_replan = spec.max_no_change_before_replan;
  return { ...initialMonitorState(), todo_id, policy };
}

/**
 * Folds a goal-stream monitor fact, re-checking its rules (a forged log cannot open a generation twice,
 * skip one, or link a successor that was not added): the new state, or why the fact is not applied.
 * `linked(id)`: todo `id` was added just before, as a successor of this monitor.
 */
export function applyMonitorFact(
  m: MonitorState,
  e: MonitorGoalEvent,
  linked: (todoId: string) => boolean,
): MonitorState | string {
  if (m.completed) return `monitor ${m.todo_id} is completed`;
  switch (e.type) {
    case "monitor_observation_recorded":
      if (e.data.generation !== m.material_change_generation + 1)
        return `generation ${e.data.generation} does not follow ${m.material_change_generation}`;
      break;
    case "monitor_successor_created":
      if (e.data.generation !== m.material_change_generation)
        return `generation ${e.data.generation} is not the current one (${m.material_change_generation})`;
      if (m.successors[e.data.generation] !== undefined)
        return `generation ${e.data.generation} already has successor ${m.successors[e.data.generation]}`;
      if (!linked(e.data.successor.todo_id))
        return `successor ${e.data.successor.todo_id} was not added as this monitor's successor in the same append`;
      break;
    case "monitor_completed":
      if (e.data.followup.kind === "successor" && !linked(e.data.followup.successor.todo_id))
        return `successor ${e.data.followup.successor.todo_id} was not added as this monitor's successor in the same append`;
      break;
    default:
      break;
  }
  return evolveMonitor(m, e);
}

/** What a host should do with the monitor now (a future next_due_at is never advancement work). */
export function monitorPollAction(s: MonitorState, now: string): "quiet_noop" | "poll" | "complete" | "done" {
  if (s.completed) return "done";
  if (s.policy.expires_at && !before(now, s.policy.expires_at)) return "complete";
  return before(now, s.next_due_at) ? "quiet_noop" : "poll";
}

/** The receipt of an operation already decided (a retry replays it). */
export function operationReceipt(s: MonitorState, operation_id: string): MonitorEvent[] | null {
  return s.operations[operation_id] ?? null;
}

export function decideMonitor(cmd: MonitorCommand, s: MonitorState): MonitorEvent[] {
  if (cmd.kind === "arm") {
    if (s.todo_id) throw new MonitorRefusal("already_armed", `monitor ${s.todo_id} is already armed`);
    return [
      { type: "monitor_armed", data: { todo_id: cmd.todo_id, policy: cmd.policy, next_due_at: cmd.now } },
    ];
  }
  if (!s.todo_id) throw new MonitorRefusal("not_armed", "arm the monitor first");
  if (s.operations[cmd.operation_id]) return []; // a retry: the receipt is replayed, nothing new is decided
  if (s.completed) throw new MonitorRefusal("completed", `monitor ${s.todo_id} is completed`);
  const op: Op = { todo_id: s.todo_id, operation_id: cmd.operation_id, at: cmd.now };
  if (cmd.kind === "complete") {
    if (cmd.followup.kind === "no_followup" && !cmd.followup.rationale.trim())
      throw new MonitorRefusal("no_followup_rationale", "no_followup needs a rationale");
    return [{ type: "monitor_completed", data: { ...op, reason: cmd.reason, followup: cmd.followup } }];
  }
  const action = monitorPollAction(s, cmd.now);
  if (action === "quiet_noop") return [];
  if (action === "complete")
    throw new MonitorRefusal(
      "expired",
      `monitor ${s.todo_id} expired at ${s.policy.expires_at}: complete it with a successor or no_followup`,
    );
  const next = plus(cmd.now, s.policy.cadence_seconds);
  if (cmd.kind === "record_poll_failure") {
    const { failure, exit_code, detail } = cmd;
    return [{ type: "monitor_poll_failed", data: { ...op, failure, exit_code, detail, next_due_at: next } }];
  }
  if (s.result_hash === null)
    return [
      { type: "monitor_baseline_recorded", data: { ...op, result_hash: cmd.result_hash, next_due_at: next } },
    ];
  if (cmd.result_hash === s.result_hash) {
    const n = s.consecutive_no_change + 1;
    const max = s.policy.max_no_change_before_replan;
    return [
      {
        type: "monitor_no_change_recorded",
        data: {
          ...op,
          result_hash: cmd.result_hash,
          consecutive_no_change: n,
          next_due_at: next,
          // Every max-th unchanged poll in a row asks once (not every poll after the first ask).
          replan_requested: max !== undefined && n % max === 0,
        },
      },
    ];
  }
  const gen = s.material_change_generation + 1;
  if (cmd.generation !== gen)
    throw new MonitorRefusal(
      "generation_not_advanced",
      `a material change must open generation ${gen}, got ${cmd.generation ?? "none"}`,
    );
  if (s.successors[gen] !== undefined)
    throw new MonitorRefusal(
      "duplicate_successor",
      `generation ${gen} already has successor ${s.successors[gen]}`,
    );
  if (!cmd.successor)
    throw new MonitorRefusal("successor_missing", "a material change must name the successor it asks for");
  return [
    {
      type: "monitor_observation_recorded",
      data: { ...op, result_hash: cmd.result_hash, generation: gen, next_due_at: next },
    },
    { type: "monitor_successor_created", data: { ...op, generation: gen, successor: cmd.successor } },
  ];
}

export const monitorDecider: Decider<MonitorState, MonitorCommand, MonitorEvent> = {
  initialState: initialMonitorState,
  evolve: evolveMonitor,
  decide: decideMonitor,
};
