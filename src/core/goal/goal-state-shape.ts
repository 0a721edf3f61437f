import type {
  AcceptanceItem,
  Budget,
  GateDecision,
  GoalAgent,
  GoalWorkspace,
  MonitorSpec,
  ResumeCondition,
  TaskRef,
  TodoClass,
  TodoSpec,
  TodoStatus,
  ValidationReceipt,
  VisionCheckpoint,
} from "../events/goal/goal-events.js";
import type { MonitorState } from "./turn/monitor.js";
import type { TurnLease } from "./turn/turn-lease.js";
import type { TurnState } from "./turn/turn-state.js";

// The goal's state as the fold builds it: its shape, the state before any event, and a todo as added.
// The fold itself is goal-state.ts.

/** The evidence a completed todo holds. */
export interface Completion {
  run_id: string;
  envelope_digest: string;
  goal_revision: string;
  task_digest: string;
}

/** One todo as folded from its events: the four statuses and the orthogonal relations. */
export interface TodoState {
  id: string;
  content: string;
  class: TodoClass;
  status: TodoStatus;
  task: TaskRef | null;
  decision_scope: string | null;
  global_gate: boolean;
  required_decision_scopes: string[];
  depends_on: string[];
  unblocks_todo_id: string | null;
  monitor: MonitorSpec | null;
  /** A routing signal (which agent means to take it), never a lock and never "running". */
  claimed_by: string | null;
  resume_when: ResumeCondition | null;
  superseded_by: string | null;
  successor_of: string | null;
  successors: string[];
  no_followup: { rationale: string } | null;
  completion: Completion | null;
  /** A user gate's decision. */
  decision: GateDecision | null;
  block_reason: string | null;
  note: "superseded" | null;
  /** Position in the goal stream (0-based event index) where it was added and where it was closed. */
  added_at: number;
  closed_at: number | null;
}

export interface VisionState {
  agent_id: string;
  route: string;
  checkpoint: VisionCheckpoint;
  /** Stream position of the last vision fact for this agent. */
  at: number;
  last: "recorded" | "patched" | "unchanged" | "closed";
}

export interface SpendRecord {
  turn_id: string;
  at: string;
  turns: number;
  tokens: number;
  cost_usd: number;
}

export interface AcceptanceReceipt {
  receipt: ValidationReceipt;
  acceptance_version: number;
  at: number;
}

/** The goal as folded from its stream. Derived decisions are computed from it, never stored in it. */
export interface GoalState {
  created: boolean;
  goalId: string;
  objective: string;
  acceptance: AcceptanceItem[];
  /** Bumped by every acceptance change: a vision checkpoint read against an older one is stale. */
  acceptanceVersion: number;
  workspace: GoalWorkspace | null;
  agent: GoalAgent | null;
  budget: Budget;
  activation: "active" | "stopped";
  /** The goal workspace's current git revision, as recorded by facts. */
  revision: string;
  todos: Record<string, TodoState>;
  /** Todo ids in the order they were added. */
  order: string[];
  /** Acceptance receipts by acceptance item id, oldest first. */
  acceptanceReceipts: Record<string, AcceptanceReceipt[]>;
  /** Run ids already used as a todo's evidence → that todo. */
  evidenceRuns: Record<string, string>;
  visions: Record<string, VisionState>;
  spends: SpendRecord[];
  noFollowup: { rationale: string; at: number } | null;
  /** Each continuous monitor's poll state, by todo id (armed when the todo is added). */
  monitors: Record<string, MonitorState>;
  /** Monitor todo id → stream position of the no-change receipt that asked for a replan. */
  monitorReplans: Record<string, number>;
  /** Stream position of the last replan answer that is not a todo (acceptance change, vision unchanged or
   * closed, no_followup, compensation); -1 before any. A bare vision patch is no answer: its delta is. */
  lastAnswerAt: number;
  /** Replan answers given under an operation id (the planner turn's writeback effect_ref). */
  replanOperations: Record<string, { outcome: "delta" | "replan_noop"; obligation: string; at: number }>;
  /** Answers with no delta: recorded, never clearing an obligation. */
  replanNoops: { agent_id: string; obligation: string; at: number }[];
  /** Every revision the goal workspace held, oldest first (a compensation reverts one of them). */
  revisionHistory: string[];
  compensations: { reverted_revision: string; revert_revision: string; successor_id: string; at: number }[];
  /** Events folded so far (the next event's position). */
  position: number;
  /** The governed turns, by turn key (goal/agent/turn_instance_id), each folded from its own facts. */
  turns: Record<string, TurnState>;
  /** Turn keys in the order they were bound. */
  turnOrder: string[];
  /** The goal's turn lease as its facts leave it (live or not: compare expires_at with now). */
  lease: TurnLease | null;
  /** Events the fold refused to apply because they break a rule (a forged or corrupt log): health issues. */
  anomalies: string[];
}

export const DEFAULT_BUDGET: Budget = { window_seconds: 86_400 };

/** The state before any event. */
export function initialState(): GoalState {
  return {
    created: false,
    goalId: "",
    objective: "",
    acceptance: [],
    acceptanceVersion: 0,
    workspace: null,
    agent: null,
    budget: DEFAULT_BUDGET,
    activation: "active",
    revision: "",
    todos: {},
    order: [],
    acceptanceReceipts: {},
    evidenceRuns: {},
    visions: {},
    spends: [],
    noFollowup: null,
    monitors: {},
    monitorReplans: {},
    lastAnswerAt: -1,
    replanNoops: [],
    replanOperations: {},
    revisionHistory: [],
    compensations: [],
    position: 0,
    turns: {},
    turnOrder: [],
    lease: null,
    anomalies: [],
  };
}

/** A todo as added, before any lifecycle event. */
export function newTodo(spec: TodoSpec, successorOf: string | null, at: number): TodoState {
  return {
    id: spec.id,
    content: spec.content,
    class: spec.class,
    status: "open",
    task: spec.task ?? null,
    decision_scope: spec.decision_scope ?? null,
    global_gate: spec.global_gate === true,
    required_decision_scopes: spec.required_decision_scopes ?? [],
    depends_on: spec.depends_on ?? [],
    unblocks_todo_id: spec.unblocks_todo_id ?? null,
    monitor: spec.monitor ?? null,
    claimed_by: null,
    resume_when: null,
    superseded_by: null,
    successor_of: successorOf,
    successors: [],
    no_followup: null,
    completion: null,
    decision: null,
    block_reason: null,
    note: null,
    added_at: at,
    closed_at: null,
  };
}
