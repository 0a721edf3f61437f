import type {
  EffectPhase,
  SchedulerHintFact,
  TurnFailureCode,
  TurnIdentity,
  TurnReceipt,
  TurnWork,
  TypedResult,
  Usage,
} from "../../events/goal/turn-events.js";
import { LoopgateError } from "../../kernel/errors.js";

/**
 * What the turn decider is asked, and how it refuses: not events (nothing here is stored), the words
 * the runner uses to report each phase's outcome. The facts the decider answers with are turn-events.ts's.
 */

/** A readback of a prepared effect, looked up by its effect ref. */
export type Readback =
  | { found: "committed"; payload: CommittedPayload }
  | { found: "absent" }
  | { found: "unknown"; reason: string };

/** What a committed effect carries, per phase (the same data its completion fact records). */
export type CommittedPayload =
  | { phase: "host_execute"; runRef: string }
  | { phase: "durable_writeback"; commit: string; newRevision: string };

/** What the durable writeback reports: a commit, a refusal, or a revision that moved under it. */
export type WritebackOutcome =
  | { kind: "accepted"; commit: string; newRevision: string }
  | { kind: "rejected"; reason: string }
  | { kind: "cas_conflict"; currentRevision: string };

/** The commands the turn decider accepts; it maps their fields to the stored facts' wire names. */
export type TurnCommand =
  | { type: "bind"; identity: TurnIdentity; work: TurnWork; baseRevision: string }
  | { type: "prepare_effect"; identity: TurnIdentity; phase: EffectPhase; effectRef: string }
  | { type: "record_host_execute"; identity: TurnIdentity; effectRef: string; runRef: string }
  | { type: "record_typed_result"; identity: TurnIdentity; result: TypedResult }
  | { type: "record_validation"; identity: TurnIdentity; receipt: TurnReceipt | null }
  | { type: "record_writeback"; identity: TurnIdentity; effectRef: string; outcome: WritebackOutcome }
  | {
      type: "record_spend";
      identity: TurnIdentity;
      spendKey: string;
      usage: Usage;
      outcome: { kind: "accepted" } | { kind: "rejected"; reason: string };
    }
  | { type: "record_scheduler_apply"; identity: TurnIdentity; effectRef: string; hint: SchedulerHintFact }
  | {
      type: "record_scheduler_ack";
      identity: TurnIdentity;
      effectRef: string;
      outcome: { kind: "ack"; mode: "host_match" | "host_updated" } | { kind: "failed"; reason: string };
    }
  | {
      type: "resolve_readback";
      identity: TurnIdentity;
      phase: EffectPhase;
      effectRef: string;
      readback: Readback;
    }
  | { type: "rebase"; identity: TurnIdentity; toRevision: string }
  | { type: "release"; identity: TurnIdentity; reason: string };

/** A refused turn command; `failure` is the typed reason (the message names the rule). */
export class TurnRefusal extends LoopgateError {
  readonly failure: TurnFailureCode;
  constructor(failure: TurnFailureCode, message: string) {
    super(`turn_${failure}`, `${failure}: ${message}`);
    this.failure = failure;
  }
}
