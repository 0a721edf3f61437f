import { LoopgateError } from "../../kernel/errors.js";
import type { ValidationReceipt } from "./validation-receipt.js";

/**
 * A governed turn (settlement): the facts of one turn, in phase order. Each fact carries
 * the turn identity `goal_id + agent_id + turn_instance_id`; the binding ties it to exactly one work
 * item (a todo or a replan obligation) and the goal revision it starts from.
 */
export interface TurnIdentity {
  goal_id: string;
  agent_id: string;
  turn_instance_id: string;
}

export type TurnWork =
  | { kind: "todo"; todo_id: string }
  | { kind: "replan"; obligation_id: string }
  /** The acceptance items proved fresh on the turn's revision once the advancement frontier is exhausted. */
  | { kind: "acceptance"; acceptance_ids: string[] };

export const TURN_PHASES = [
  "host_execute",
  "typed_result",
  "validation",
  "durable_writeback",
  "quota_spend",
  "scheduler_apply",
  "scheduler_ack",
] as const;
export type TurnPhase = (typeof TURN_PHASES)[number];

/**
 * Phases whose effect lives outside the turn's stream and so is journaled as prepared first (a crash
 * after it is resolved by readback). The scheduler apply needs no readback: re-applying finds the host
 * cadence already matching and ACKs `host_match`.
 */
export type EffectPhase = "host_execute" | "durable_writeback";

/** What the host carried out: an envelope of the todo's task, a monitor observation, or a plan delta. */
export type TypedResult =
  | { kind: "envelope"; run_id: string; task_id: string; status: string; envelope_digest: string }
  | { kind: "observation"; result_hash: string }
  | { kind: "plan"; delta_digest: string };

/** A validation receipt: a matching SUCCESS of a run, or a well-formed typed result (monitor, plan). */
export type TurnReceipt = { kind: "run"; receipt: ValidationReceipt } | { kind: "typed"; digest: string };

export interface Usage {
  tokens: number;
  cost_usd: number;
  turns: number;
}

export interface SchedulerHintFact {
  action: string;
  not_before: string | null;
  why: string;
}

export type TurnFailureCode =
  | "receipt_missing"
  | "identity_mismatch"
  | "writeback_rejected"
  | "quota_spend_rejected"
  | "needs_rebase"
  | "blocked_health"
  | "phase_conflict";

/** A recorded failure (routes to repair or retry; the identity is kept for idempotency). */
export interface TurnFailure {
  code: TurnFailureCode;
  phase: TurnPhase;
  detail: string;
  current_revision?: string;
}

type WithId<T> = { identity: TurnIdentity } & T;

export type TurnEvent =
  | { type: "turn_bound"; data: WithId<{ work: TurnWork; base_revision: string }> }
  | { type: "turn_effect_prepared"; data: WithId<{ phase: EffectPhase; effect_ref: string }> }
  | {
      type: "turn_effect_readback";
      data: WithId<{ phase: EffectPhase; effect_ref: string; found: "committed" | "absent" }>;
    }
  | { type: "turn_host_executed"; data: WithId<{ effect_ref: string; run_ref: string }> }
  | { type: "turn_typed_result"; data: WithId<{ result: TypedResult }> }
  | { type: "turn_validated"; data: WithId<{ receipt: TurnReceipt }> }
  | {
      type: "turn_writeback_accepted";
      data: WithId<{ effect_ref: string; commit: string; new_revision: string }>;
    }
  | { type: "turn_quota_spent"; data: WithId<{ spend_key: string; usage: Usage }> }
  | { type: "turn_scheduler_applied"; data: WithId<{ effect_ref: string; hint: SchedulerHintFact }> }
  | {
      type: "turn_scheduler_acked";
      data: WithId<{ effect_ref: string; mode: "host_match" | "host_updated" }>;
    }
  | { type: "turn_scheduler_apply_failed"; data: WithId<{ effect_ref: string; reason: string }> }
  | { type: "turn_rebased"; data: WithId<{ from_revision: string; to_revision: string }> }
  | { type: "turn_released"; data: WithId<{ reason: string }> }
  | { type: "turn_failed"; data: WithId<{ failure: TurnFailure }> };

export type TurnEventType = TurnEvent["type"];

/** A readback of a prepared effect, looked up by its effect_ref. */
export type Readback =
  | { found: "committed"; payload: CommittedPayload }
  | { found: "absent" }
  | { found: "unknown"; reason: string };

/** What a committed effect carries, per phase (the same data its completion fact records). */
export type CommittedPayload =
  | { phase: "host_execute"; run_ref: string }
  | { phase: "durable_writeback"; commit: string; new_revision: string };

export type WritebackOutcome =
  | { kind: "accepted"; commit: string; new_revision: string }
  | { kind: "rejected"; reason: string }
  | { kind: "cas_conflict"; current_revision: string };

export type TurnCommand =
  | { kind: "bind"; identity: TurnIdentity; work: TurnWork; base_revision: string }
  | { kind: "prepare_effect"; identity: TurnIdentity; phase: EffectPhase; effect_ref: string }
  | { kind: "record_host_execute"; identity: TurnIdentity; effect_ref: string; run_ref: string }
  | { kind: "record_typed_result"; identity: TurnIdentity; result: TypedResult }
  | { kind: "record_validation"; identity: TurnIdentity; receipt: TurnReceipt | null }
  | { kind: "record_writeback"; identity: TurnIdentity; effect_ref: string; outcome: WritebackOutcome }
  | {
      kind: "record_spend";
      identity: TurnIdentity;
      spend_key: string;
      usage: Usage;
      outcome: { kind: "accepted" } | { kind: "rejected"; reason: string };
    }
  | { kind: "record_scheduler_apply"; identity: TurnIdentity; effect_ref: string; hint: SchedulerHintFact }
  | {
      kind: "record_scheduler_ack";
      identity: TurnIdentity;
      effect_ref: string;
      outcome: { kind: "ack"; mode: "host_match" | "host_updated" } | { kind: "failed"; reason: string };
    }
  | {
      kind: "resolve_readback";
      identity: TurnIdentity;
      phase: EffectPhase;
      effect_ref: string;
      readback: Readback;
    }
  | { kind: "rebase"; identity: TurnIdentity; to_revision: string }
  | { kind: "release"; identity: TurnIdentity; reason: string };

/** A refused turn command; `failure` is the typed reason (the message names the rule). */
export class TurnRefusal extends LoopgateError {
  readonly failure: TurnFailureCode;
  constructor(failure: TurnFailureCode, message: string) {
    super(`turn_${failure}`, `${failure}: ${message}`);
    this.failure = failure;
  }
}

/** The spend key of a turn: spend happens once per identity. */
export function spendKey(id: TurnIdentity): string {
  return `${id.goal_id}/${id.agent_id}/${id.turn_instance_id}`;
}

/** The deterministic effect_ref of a phase of a turn (the writeback commit trailer carries it). */
export function effectRef(id: TurnIdentity, phase: EffectPhase): string {
  return `${spendKey(id)}#${phase}`;
}

/** The effect_ref a scheduler apply and its ACK or failure receipt carry. */
export function schedulerRef(id: TurnIdentity): string {
  return `${spendKey(id)}#scheduler_apply`;
}
