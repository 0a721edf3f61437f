import type { z } from "zod";
import type {
  MonitorFollowup,
  MonitorGoalEvent,
  MonitorSuccessor,
  PollFailureKind,
} from "../../events/goal/monitor-events.js";
import { backoffDelaySeconds } from "../../kernel/backoff.js";
import type { Decider } from "../../kernel/decider.js";
import { DomainError } from "../../kernel/errors.js";

/**
 * A continuous monitor's poll rules, pure. Before next_due_at a poll is a quiet no-op;
 * due and the same result_hash is a no-change receipt; a changed hash is a material change whose
 * observation and successor are one decided batch under one operation id (a retry replays, never a
 * second successor; the generation must advance); expiry or a stop completes the monitor with a
 * successor or no_followup. The first poll records the baseline hash.
 *
 * The cadence backs off: each poll with no material change (the same hash, or a failed poll) in a row
 * multiplies the wait by the policy's factor, up to its maximum; the baseline, a material change and a
 * person's reopen reset it to the cadence. Every poll fact records the next_due_at this rule gives, so any
 * host, restarted or not, wakes at the same time. A failed poll is counted: at maxFailures in a row the
 * monitor stops (the goal blocks its todo for a person: monitor-goal.ts), never an endless retry.
 */
export interface MonitorPolicy {
  cadenceSeconds: number;
  expiresAt?: string;
  maxNoChangeBeforeReplan?: number;
  /** The wait grows by this factor per quiet poll in a row (1: a fixed cadence). */
  backoffFactor: number;
  /** The longest wait between two polls (never below the cadence). */
  backoffMaxSeconds: number;
  /** Failed polls in a row after which the monitor stops polling. */
  maxFailures: number;
}

/** Failed polls in a row that stop a monitor when its spec names no max_failures. */
export const DEFAULT_MAX_FAILURES = 3;

/**
 * The wait before the next poll when the poll just made was the `quiet`-th in a row with no material change
 * (0: a baseline or a change): the cadence for 0 and 1, then the cadence · factor^(quiet−1), bounded by the
 * maximum. So a first unchanged or failed poll is retried at the cadence; backoff starts with the second.
 */
export function pollDelaySeconds(p: MonitorPolicy, quiet: number): number {
  return backoffDelaySeconds(Math.max(1, quiet), {
    baseSeconds: p.cadenceSeconds,
    factor: p.backoffFactor,
    maxSeconds: Math.max(p.cadenceSeconds, p.backoffMaxSeconds),
  });
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
  /** Polls in a row with no material change (unchanged or failed) since the baseline, a change or a reopen. */
  quietPolls: number;
  /** Failed polls in a row (a successful poll or a reopen resets it). */
  consecutiveFailures: number;
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
    policy: { cadenceSeconds: 1, backoffFactor: 1, backoffMaxSeconds: 1, maxFailures: DEFAULT_MAX_FAILURES },
    nextDueAt: "",
    lastCheckedAt: null,
    resultHash: null,
    consecutiveNoChange: 0,
    quietPolls: 0,
    consecutiveFailures: 0,
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
        quietPolls: 0,
        consecutiveFailures: 0,
      };
    case "monitor_no_change_recorded":
      return {
        ...s,
        operations: ops(e.data),
        lastCheckedAt: e.data.at,
        consecutiveNoChange: e.data.consecutive_no_change,
        replanRequested: e.data.replan_requested,
        nextDueAt: e.data.next_due_at,
        quietPolls: s.quietPolls + 1,
        consecutiveFailures: 0,
      };
    case "monitor_poll_failed":
      return {
        ...s,
        operations: ops(e.data),
        lastCheckedAt: e.data.at,
        nextDueAt: e.data.next_due_at,
        quietPolls: s.quietPolls + 1,
        consecutiveFailures: s.consecutiveFailures + 1,
      };
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
        quietPolls: 0,
        consecutiveFailures: 0,
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
  spec: {
    cadence_seconds: number;
    expires_at?: string;
    max_no_change_before_replan?: number;
    backoff?: { factor: number; max_seconds: number };
    max_failures?: number;
  },
): MonitorState {
  const policy: MonitorPolicy = {
    cadenceSeconds: spec.cadence_seconds,
    // A spec without backoff (recorded before it existed) keeps the fixed cadence it was recorded with.
    backoffFactor: spec.backoff?.factor ?? 1,
    backoffMaxSeconds: Math.max(spec.cadence_seconds, spec.backoff?.max_seconds ?? spec.cadence_seconds),
    maxFailures: spec.max_failures ?? DEFAULT_MAX_FAILURES,
  };
  if (spec.expires_at) policy.expiresAt = spec.expires_at;
  if (spec.max_no_change_before_replan) policy.maxNoChangeBeforeReplan = spec.max_no_change_before_replan;
  return { ...initialMonitorState(), todoId, policy };
}

/**
 * A person reopened the monitor's todo (after a stop by failed polls, or a block of their own): it is due at
 * once, its backoff and its failure count start again (a person's write resets the cadence).
 */
export function reopenMonitor(m: MonitorState): MonitorState {
  return { ...m, nextDueAt: "", quietPolls: 0, consecutiveFailures: 0 };
}

/** The monitor's failed polls in a row reached its bound: it polls no more until a person reopens it. */
export const stoppedByFailures = (m: MonitorState) => m.consecutiveFailures >= m.policy.maxFailures;

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
  // The wait after this poll: the cadence after a baseline or a change, backed off after a quiet one.
  const after = (quiet: number) => plus(cmd.now, pollDelaySeconds(s.policy, quiet));
  if (cmd.type === "record_poll_failure") {
    const { failure, exitCode: exit_code, detail } = cmd;
    return [
      {
        type: "monitor_poll_failed",
        data: {
          ...op,
          failure,
          exit_code,
          detail,
          next_due_at: after(s.quietPolls + 1),
          consecutive_failures: s.consecutiveFailures + 1,
        },
      },
    ];
  }
  const next = after(0);
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
          next_due_at: after(s.quietPolls + 1),
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
