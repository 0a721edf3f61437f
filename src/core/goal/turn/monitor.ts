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
  cadenceSeconds: number;
  expiresAt?: string;
  maxNoChangeBeforeReplan?: number;
}

export type SuccessorSpec = z.infer<typeof MonitorSuccessor>;
export type Followup = z.infer<typeof MonitorFollowup>;

export interface MonitorState {
  todoId: string;
  policy: MonitorPolicy;
  /** "" before the first poll: due at once. */
  nextDueAt: string;
  lastCheckedAt: string | null;
  resultHash: string | null;
  consecutiveNoChange: number;
  materialChangeGeneration: number;
  /** operation id → the events it decided (the durable operation receipt). */
  operations: Record<string, MonitorEvent[]>;
  successors: Record<number, string>;
  /** The last poll asked for a replan (max_no_change_before_replan reached). */
  replanRequested: boolean;
  completed: Followup | null;
}

type Op = { todo_id: string; operation_id: string; at: string };
/** `monitor_armed` is the monitor's own start (in the goal stream: the todo's `todo_added`); the rest are goal facts. */
export type MonitorEvent =
  | { type: "monitor_armed"; data: { todo_id: string; policy: MonitorPolicy; next_due_at: string } }
  | MonitorGoalEvent;

export type MonitorCommand =
  | { type: "arm"; todoId: string; policy: MonitorPolicy; now: Date }
  | {
      type: "record_poll";
      operationId: string;
      now: Date;
      resultHash: string;
      /** Required when the hash changed: the generation this change opens (last + 1) and the work it asks for. */
      generation?: number;
      successor?: SuccessorSpec;
    }
  | {
      type: "record_poll_failure";
      operationId: string;
      now: Date;
      failure: PollFailureKind;
      exitCode: number | null;
      detail: string;
    }
  | { type: "complete"; operationId: string; now: Date; reason: string; followup: Followup };

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
    todoId: "",
    policy: { cadenceSeconds: 1 },
    nextDueAt: "",
    lastCheckedAt: null,
    resultHash: null,
    consecutiveNoChange: 0,
    materialChangeGeneration: 0,
    operations: {},
    successors: {},
    replanRequested: false,
    completed: null,
  };
}

const plus = (t: Date, s: number) => new Date(t.getTime() + s * 1000).toISOString();
/** `now` is before the ISO time `t`. */
const before = (now: Date, t: string) => now.getTime() < Date.parse(t);

export function evolveMonitor(s: MonitorState, e: MonitorEvent): MonitorState {
  const ops = (d: Op) => ({
    ...s.operations,
    [d.operation_id]: [...(s.operations[d.operation_id] ?? []), e],
  });
  switch (e.type) {
    case "monitor_armed":
      return {
        ...initialMonitorState(),
        todoId: e.data.todo_id,
        policy: e.data.policy,
        nextDueAt: e.data.next_due_at,
      };
    case "monitor_baseline_recorded":
      return {
        ...s,
        operations: ops(e.data),
        resultHash: e.data.result_hash,
        lastCheckedAt: e.data.at,
        nextDueAt: e.data.next_due_at,
      };
    case "monitor_no_change_recorded":
      return {
        ...s,
        operations: ops(e.data),
        lastCheckedAt: e.data.at,
        consecutiveNoChange: e.data.consecutive_no_change,
        replanRequested: e.data.replan_requested,
        nextDueAt: e.data.next_due_at,
      };
    case "monitor_poll_failed":
      return { ...s, operations: ops(e.data), lastCheckedAt: e.data.at, nextDueAt: e.data.next_due_at };
    case "monitor_observation_recorded":
      return {
        ...s,
        operations: ops(e.data),
        lastCheckedAt: e.data.at,
        resultHash: e.data.result_hash,
        consecutiveNoChange: 0,
        replanRequested: false,
        materialChangeGeneration: e.data.generation,
        nextDueAt: e.data.next_due_at,
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
  todoId: string,
  spec: { cadence_seconds: number; expires_at?: string; max_no_change_before_replan?: number },
): MonitorState {
  const policy: MonitorPolicy = { cadenceSeconds: spec.cadence_seconds };
  if (spec.expires_at) policy.expiresAt = spec.expires_at;
  if (spec.max_no_change_before_replan) policy.maxNoChangeBeforeReplan = spec.max_no_change_before_replan;
  return { ...initialMonitorState(), todoId, policy };
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
  if (m.completed) return `monitor ${m.todoId} is completed`;
  switch (e.type) {
    case "monitor_observation_recorded":
      if (e.data.generation !== m.materialChangeGeneration + 1)
        return `generation ${e.data.generation} does not follow ${m.materialChangeGeneration}`;
      break;
    case "monitor_successor_created":
      if (e.data.generation !== m.materialChangeGeneration)
        return `generation ${e.data.generation} is not the current one (${m.materialChangeGeneration})`;
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
export function monitorPollAction(s: MonitorState, now: Date): "quiet_noop" | "poll" | "complete" | "done" {
  if (s.completed) return "done";
  if (s.policy.expiresAt && !before(now, s.policy.expiresAt)) return "complete";
  return before(now, s.nextDueAt) ? "quiet_noop" : "poll";
}

/** The receipt of an operation already decided (a retry replays it). */
export function operationReceipt(s: MonitorState, operationId: string): MonitorEvent[] | null {
  return s.operations[operationId] ?? null;
}

export function decideMonitor(cmd: MonitorCommand, s: MonitorState): MonitorEvent[] {
  if (cmd.type === "arm") {
    if (s.todoId) throw new MonitorRefusal("already_armed", `monitor ${s.todoId} is already armed`);
    return [
      {
        type: "monitor_armed",
        data: { todo_id: cmd.todoId, policy: cmd.policy, next_due_at: cmd.now.toISOString() },
      },
    ];
  }
  if (!s.todoId) throw new MonitorRefusal("not_armed", "arm the monitor first");
  if (s.operations[cmd.operationId]) return []; // a retry: the receipt is replayed, nothing new is decided
  if (s.completed) throw new MonitorRefusal("completed", `monitor ${s.todoId} is completed`);
  const op: Op = { todo_id: s.todoId, operation_id: cmd.operationId, at: cmd.now.toISOString() };
  if (cmd.type === "complete") {
    if (cmd.followup.kind === "no_followup" && !cmd.followup.rationale.trim())
      throw new MonitorRefusal("no_followup_rationale", "no_followup needs a rationale");
    return [{ type: "monitor_completed", data: { ...op, reason: cmd.reason, followup: cmd.followup } }];
  }
  const action = monitorPollAction(s, cmd.now);
  if (action === "quiet_noop") return [];
  if (action === "complete")
    throw new MonitorRefusal(
      "expired",
      `monitor ${s.todoId} expired at ${s.policy.expiresAt}: complete it with a successor or no_followup`,
    );
  const next = plus(cmd.now, s.policy.cadenceSeconds);
  if (cmd.type === "record_poll_failure") {
    const { failure, exitCode: exit_code, detail } = cmd;
    return [{ type: "monitor_poll_failed", data: { ...op, failure, exit_code, detail, next_due_at: next } }];
  }
  if (s.resultHash === null)
    return [
      { type: "monitor_baseline_recorded", data: { ...op, result_hash: cmd.resultHash, next_due_at: next } },
    ];
  if (cmd.resultHash === s.resultHash) {
    const n = s.consecutiveNoChange + 1;
    const max = s.policy.maxNoChangeBeforeReplan;
    return [
      {
        type: "monitor_no_change_recorded",
        data: {
          ...op,
          result_hash: cmd.resultHash,
          consecutive_no_change: n,
          next_due_at: next,
          // Every max-th unchanged poll in a row asks once (not every poll after the first ask).
          replan_requested: max !== undefined && n % max === 0,
        },
      },
    ];
  }
  const gen = s.materialChangeGeneration + 1;
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
      data: { ...op, result_hash: cmd.resultHash, generation: gen, next_due_at: next },
    },
    { type: "monitor_successor_created", data: { ...op, generation: gen, successor: cmd.successor } },
  ];
}

export const monitorDecider: Decider<MonitorState, MonitorCommand, MonitorEvent> = {
  initialState: initialMonitorState,
  evolve: evolveMonitor,
  decide: decideMonitor,
};
