import type {
  EffectPhase,
  SchedulerHintFact,
  TurnEvent,
  TurnFailure,
  TurnIdentity,
  TurnReceipt,
  TurnWork,
  TypedResult,
  Usage,
} from "../../events/goal/turn-events.js";

/** The fold of one turn's facts. */
export interface TurnState {
  identity: TurnIdentity | null;
  work: TurnWork | null;
  baseRevision: string | null;
  /** Effects journaled as prepared and not yet settled (by completion or readback). */
  prepared: Partial<Record<EffectPhase, string>>;
  host: { effectRef: string; runRef: string } | null;
  result: TypedResult | null;
  receipt: TurnReceipt | null;
  writeback: { effectRef: string; commit: string; newRevision: string } | null;
  spend: { spendKey: string; usage: Usage } | null;
  applied: { effectRef: string; hint: SchedulerHintFact } | null;
  /** The schedule the host runs: set only by an ACK, never by an apply alone. */
  acked: { effectRef: string; hint: SchedulerHintFact; mode: "host_match" | "host_updated" } | null;
  applyFailures: number;
  failure: TurnFailure | null;
  released: string | null;
}

export function initialTurnState(): TurnState {
  return {
    identity: null,
    work: null,
    baseRevision: null,
    prepared: {},
    host: null,
    result: null,
    receipt: null,
    writeback: null,
    spend: null,
    applied: null,
    acked: null,
    applyFailures: 0,
    failure: null,
    released: null,
  };
}

function without(p: TurnState["prepared"], phase: EffectPhase): TurnState["prepared"] {
  const { [phase]: _gone, ...rest } = p;
  return rest;
}

export function evolveTurn(s: TurnState, e: TurnEvent): TurnState {
  switch (e.type) {
    case "turn_bound":
      return { ...s, identity: e.data.identity, work: e.data.work, baseRevision: e.data.base_revision };
    case "turn_effect_prepared":
      return { ...s, prepared: { ...s.prepared, [e.data.phase]: e.data.effect_ref } };
    case "turn_effect_readback":
      // committed: the completion fact follows in the same batch; absent: execute again. A readback
      // that resolves an effect an earlier one could not (blocked_health, then repaired) clears it.
      return {
        ...s,
        prepared: without(s.prepared, e.data.phase),
        failure: s.failure?.code === "blocked_health" && s.failure.phase === e.data.phase ? null : s.failure,
      };
    case "turn_host_executed":
      return {
        ...s,
        prepared: without(s.prepared, "host_execute"),
        host: { effectRef: e.data.effect_ref, runRef: e.data.run_ref },
      };
    case "turn_typed_result":
      return { ...s, result: e.data.result };
    case "turn_validated":
      return { ...s, receipt: e.data.receipt };
    case "turn_writeback_accepted":
      return {
        ...s,
        prepared: without(s.prepared, "durable_writeback"),
        writeback: {
          effectRef: e.data.effect_ref,
          commit: e.data.commit,
          newRevision: e.data.new_revision,
        },
      };
    case "turn_quota_spent":
      return { ...s, spend: { spendKey: e.data.spend_key, usage: e.data.usage }, failure: null };
    case "turn_scheduler_applied":
      return { ...s, applied: { effectRef: e.data.effect_ref, hint: e.data.hint } };
    case "turn_scheduler_acked":
      return s.applied
        ? { ...s, acked: { effectRef: e.data.effect_ref, hint: s.applied.hint, mode: e.data.mode } }
        : s;
    case "turn_scheduler_apply_failed":
      return { ...s, applied: null, applyFailures: s.applyFailures + 1 };
    case "turn_rebased":
      return {
        ...s,
        baseRevision: e.data.to_revision,
        result: null,
        receipt: null,
        prepared: without(s.prepared, "durable_writeback"),
        failure: null,
      };
    case "turn_released":
      return { ...s, released: e.data.reason };
    case "turn_failed":
      return {
        ...s,
        failure: e.data.failure,
        prepared:
          e.data.failure.code === "writeback_rejected" || e.data.failure.code === "needs_rebase"
            ? without(s.prepared, "durable_writeback")
            : s.prepared,
      };
  }
}
