import { LoopgateError } from "../../kernel/errors.js";
import type {
  EffectPhase,
  SchedulerHintFact,
  TurnFailureCode,
  TurnIdentity,
  TurnReceipt,
  TurnWork,
  TypedResult,
  Usage,
} from "./turn-events.js";

/**
 * What the turn decider is asked, and how it refuses: not events (nothing here is stored), the words
 * the runner uses to report each phase's outcome. The facts the decider answers with are turn-events.ts's.
 */

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
