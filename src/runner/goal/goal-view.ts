import type { TodoSpec } from "../../core/events/goal/goal-events.js";
import type { ContractWire } from "../../core/goal/contract-wire.js";
import type { TodoState } from "../../core/goal/goal-state-shape.js";
import type { HealthIssue } from "../../core/goal/runtime-state.js";
import type { KindSpend } from "../../core/goal/spend-kinds.js";
import type { TurnInFlight } from "../../core/goal/turn-in-flight.js";
import type { ResumeConditionData, TaskRefData } from "./goal-spec.js";

// What the CLI shows of a goal: its facts and derived decisions, recomputed on every read (goal-derived.ts).

/** Facts from outside the stream that the derived decisions need (health, the clock). */
export interface GoalFacts {
  now: Date;
  /** Health problems: a task file missing or invalid, the workspace dirty or missing. */
  health: HealthIssue[];
  /** The workspace's HEAD, when readable. */
  workspaceRevision: string | null;
}

/** One todo as the CLI shows it. */
export interface TodoView {
  id: string;
  class: TodoSpec["class"];
  status: "open" | "done" | "blocked" | "deferred";
  content: string;
  task: TaskRefData | null;
  decisionScope: string | null;
  dependsOn: string[];
  requires: string[];
  claimedBy: string | null;
  /** Derived: the todo's deferral condition holds (it stays deferred until reopened). */
  resumeCandidate: boolean;
  resumeWhen: ResumeConditionData | null;
  supersededBy: string | null;
  successorOf: string | null;
  noFollowup: string | null;
  gateDecision: string | null;
  completion: { runId: string; revision: string } | null;
  /** Derived handoff state of its relation, when it has one. */
  handoff: string | null;
  note: string | null;
  blockReason: string | null;
  /** A person's step recorded with evidence (todo done --evidence-url|--evidence-file, todo accept-blocker). */
  attestation: TodoState["attestation"];
}

/** A goal as the CLI shows it: facts and derived decisions, recomputed on every read. */
export interface GoalView {
  goalId: string;
  objective: string;
  activation: "active" | "stopped";
  streamRevision: number;
  /** The revision the goal stream holds as current (todo evidence must be on it). */
  revision: string;
  workspacePath: string;
  agent: { agent_id: string; kind: string; model?: string; command?: string };
  /** The goal file it was created from (a builder command's relative paths mean its folder). */
  sourcePath: string | null;
  todos: TodoView[];
  runtimeState: string;
  runtimeReason: string;
  /** The interaction contract in its printed shape (printed as is with --json). */
  contract: ContractWire;
  /** The single next action, as a sentence a person can follow. */
  nextAction: string;
  /** What keeps the goal from terminal closure; empty only when it is closed. */
  frontierGaps: string[];
  closed: boolean;
  /** How the closure intent says the goal ends (achieved, or an honest negative); null: none recorded. */
  closureOutcome: string | null;
  /** The vision checkpoint closure reads: the goal agent's route, fresh, stale or missing. */
  vision: { agentId: string; standing: "fresh" | "stale" | "missing"; last: string | null };
  budget: { limits: Record<string, unknown>; used: Record<string, unknown> };
  /** Each item with the digest its task file was recorded at. */
  acceptance: { id: string; ref: string; digest: string; proved: boolean }[];
  /** The turn in flight, from the goal's turn lease (running is never a stored todo status); null: none. */
  inFlight: TurnInFlight | null;
  /** What the goal spent over its life, by kind of turn (todo, monitor, acceptance, replan). */
  spend: KindSpend[];
}
