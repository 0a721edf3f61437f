import type {
  AcceptanceItem,
  AttestedEvidence,
  Budget,
  ClosureOutcome,
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
  runId: string;
  envelopeDigest: string;
  goalRevision: string;
  taskDigest: string;
}

/** One todo as folded from its events: the four statuses and the orthogonal relations. */
export interface TodoState {
  id: string;
  content: string;
  class: TodoClass;
  status: TodoStatus;
  task: TaskRef | null;
  decisionScope: string | null;
  globalGate: boolean;
  requiredDecisionScopes: string[];
  dependsOn: string[];
  unblocksTodoId: string | null;
  monitor: MonitorSpec | null;
  /** A routing signal (which agent means to take it), never a lock and never "running". */
  claimedBy: string | null;
  resumeWhen: ResumeCondition | null;
  supersededBy: string | null;
  successorOf: string | null;
  successors: string[];
  noFollowup: { rationale: string } | null;
  completion: Completion | null;
  /** A user gate's decision. */
  decision: GateDecision | null;
  /** A person's step recorded with evidence: done (user_action, task-less blocker) or blocker_accepted. */
  attestation: {
    outcome: "done" | "blocker_accepted";
    note: string;
    by: string | null;
    evidence: AttestedEvidence[];
  } | null;
  blockReason: string | null;
  note: "superseded" | null;
  /** Position in the goal stream (0-based event index) where it was added and where it was closed. */
  addedAt: number;
  closedAt: number | null;
}

export interface VisionState {
  agentId: string;
  route: string;
  checkpoint: VisionCheckpoint;
  /** Stream position of the last vision fact for this agent. */
  at: number;
  last: "recorded" | "patched" | "unchanged" | "closed" | "retired" | "superseded";
  /** The agent whose route replaced this one (last: superseded). */
  supersededBy: string | null;
}

export interface SpendRecord {
  turnId: string;
  at: string;
  turns: number;
  tokens: number;
  costUsd: number;
}

export interface AcceptanceReceipt {
  receipt: ValidationReceipt;
  acceptanceVersion: number;
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
  noFollowup: { rationale: string; at: number; outcome: ClosureOutcome; cites: string | null } | null;
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
  replanNoops: { agentId: string; obligation: string; at: number }[];
  /** Every revision the goal workspace held, oldest first (a compensation reverts one of them). */
  revisionHistory: string[];
  compensations: { revertedRevision: string; revertRevision: string; successorId: string; at: number }[];
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
    decisionScope: spec.decision_scope ?? null,
    globalGate: spec.global_gate === true,
    requiredDecisionScopes: spec.required_decision_scopes ?? [],
    dependsOn: spec.depends_on ?? [],
    unblocksTodoId: spec.unblocks_todo_id ?? null,
    monitor: spec.monitor ?? null,
    claimedBy: null,
    resumeWhen: null,
    supersededBy: null,
    successorOf: successorOf,
    successors: [],
    noFollowup: null,
    completion: null,
    decision: null,
    attestation: null,
    blockReason: null,
    note: null,
    addedAt: at,
    closedAt: null,
  };
}
