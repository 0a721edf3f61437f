import {
  type EffectPhase,
  effectRef,
  schedulerRef,
  spendKey,
  type TurnEvent,
  type TurnFailure,
  type TurnIdentity,
} from "../../events/goal/turn-events.js";
import type { Decider } from "../../kernel/decider.js";
import { type TurnCommand, TurnRefusal } from "./turn-commands.js";
import { evolveTurn, initialTurnState, type TurnState } from "./turn-state.js";

/**
 * The settlement decider of one governed turn: host_execute → typed_result →
 * validation → durable_writeback → quota_spend → scheduler_apply → scheduler_ack, each a fact with
 * the turn identity. Out-of-order or mismatched facts are refused with a typed `TurnRefusal`;
 * outcomes the world reports (a rejected writeback, a moved revision, a refused spend, an unknown
 * readback) are recorded as `turn_failed` and route to repair or retry.
 */
const sameId = (a: TurnIdentity, b: TurnIdentity) =>
  a.goal_id === b.goal_id && a.agent_id === b.agent_id && a.turn_instance_id === b.turn_instance_id;
const json = (x: unknown) => JSON.stringify(x);
const refuse = (code: ConstructorParameters<typeof TurnRefusal>[0], msg: string): never => {
  throw new TurnRefusal(code, msg);
};

function failed(identity: TurnIdentity, failure: TurnFailure): TurnEvent[] {
  return [{ type: "turn_failed", data: { identity, failure } }];
}

function checkBound(cmd: Exclude<TurnCommand, { type: "bind" }>, s: TurnState): TurnIdentity {
  if (!s.identity) return refuse("receipt_missing", `${cmd.type}: the turn is not bound yet (bind first)`);
  if (!sameId(cmd.identity, s.identity))
    refuse(
      "identity_mismatch",
      `${cmd.type}: identity ${spendKey(cmd.identity)} is not this turn's ${spendKey(s.identity)}`,
    );
  if (s.released) refuse("phase_conflict", `${cmd.type}: the turn was released (${s.released})`);
  return s.identity;
}

/** Which failure lets a command through (a failure routes to its own repair or retry only). */
function checkFailure(cmd: TurnCommand, s: TurnState): void {
  const f = s.failure;
  if (!f) return;
  const allowed: Record<string, TurnCommand["type"][]> = {
    needs_rebase: ["rebase", "release"],
    quota_spend_rejected: ["record_spend"],
    blocked_health: ["resolve_readback", "release"],
    receipt_missing: ["release"],
    writeback_rejected: ["release"],
  };
  if (!(allowed[f.code] ?? []).includes(cmd.type))
    refuse(
      "phase_conflict",
      `${cmd.type}: the turn failed at ${f.phase} with ${f.code} (${f.detail}); repair or retry that first`,
    );
}

function checkEffectRef(id: TurnIdentity, phase: EffectPhase, ref: string): void {
  if (ref !== effectRef(id, phase))
    refuse("identity_mismatch", `${phase}: effect_ref ${ref} is not this turn's ${effectRef(id, phase)}`);
}

export function decideTurn(cmd: TurnCommand, s: TurnState): TurnEvent[] {
  if (cmd.type === "bind") {
    if (s.identity) {
      const same =
        sameId(s.identity, cmd.identity) &&
        json(s.work) === json(cmd.work) &&
        s.baseRevision === cmd.baseRevision;
      if (same) return [];
      return refuse(
        "identity_mismatch",
        `bind: the turn is already bound to ${spendKey(s.identity)} ${json(s.work)}`,
      );
    }
    return [
      {
        type: "turn_bound",
        data: { identity: cmd.identity, work: cmd.work, base_revision: cmd.baseRevision },
      },
    ];
  }
  const id = checkBound(cmd, s);
  checkFailure(cmd, s);
  switch (cmd.type) {
    case "prepare_effect": {
      checkEffectRef(id, cmd.phase, cmd.effectRef);
      if (s.prepared[cmd.phase]) return [];
      if (cmd.phase === "host_execute" && s.host) return [];
      if (cmd.phase === "durable_writeback") {
        if (s.writeback) return [];
        if (!s.receipt)
          refuse("receipt_missing", "durable_writeback: no validation receipt; nothing may be written back");
      }
      return [
        {
          type: "turn_effect_prepared",
          data: { identity: id, phase: cmd.phase, effect_ref: cmd.effectRef },
        },
      ];
    }
    case "record_host_execute": {
      checkEffectRef(id, "host_execute", cmd.effectRef);
      if (s.host)
        return s.host.runRef === cmd.runRef
          ? []
          : refuse("phase_conflict", `host_execute: already recorded as ${s.host.runRef}`);
      if (s.prepared.host_execute !== cmd.effectRef)
        refuse("receipt_missing", "host_execute: the effect was not prepared (journal it before executing)");
      return [
        {
          type: "turn_host_executed",
          data: { identity: id, effect_ref: cmd.effectRef, run_ref: cmd.runRef },
        },
      ];
    }
    case "record_typed_result": {
      if (!s.host) refuse("receipt_missing", "typed_result: no host_execute fact");
      if (s.result)
        return json(s.result) === json(cmd.result)
          ? []
          : refuse("phase_conflict", "typed_result: a different result is already recorded");
      const r = cmd.result;
      const fits = s.work?.kind === "replan" ? r.kind === "plan" : r.kind !== "plan";
      if (!fits)
        refuse("identity_mismatch", `typed_result: a ${r.kind} result does not answer ${json(s.work)}`);
      return [{ type: "turn_typed_result", data: { identity: id, result: r } }];
    }
    case "record_validation":
      return decideValidation(cmd.receipt, id, s);
    case "record_writeback": {
      checkEffectRef(id, "durable_writeback", cmd.effectRef);
      if (!s.receipt) refuse("receipt_missing", "durable_writeback: no validation receipt");
      const o = cmd.outcome;
      if (s.writeback)
        return o.kind === "accepted" && o.commit === s.writeback.commit
          ? []
          : refuse("phase_conflict", `durable_writeback: already accepted as ${s.writeback.commit}`);
      if (s.prepared.durable_writeback !== cmd.effectRef)
        refuse("receipt_missing", "durable_writeback: the effect was not prepared");
      if (o.kind === "rejected")
        return failed(id, { code: "writeback_rejected", phase: "durable_writeback", detail: o.reason });
      if (o.kind === "cas_conflict")
        return failed(id, {
          code: "needs_rebase",
          phase: "durable_writeback",
          detail: `the goal revision moved from ${s.baseRevision} to ${o.currentRevision}`,
          current_revision: o.currentRevision,
        });
      return [
        {
          type: "turn_writeback_accepted",
          data: { identity: id, effect_ref: cmd.effectRef, commit: o.commit, new_revision: o.newRevision },
        },
      ];
    }
    case "record_spend": {
      if (!s.writeback) refuse("receipt_missing", "quota_spend: no accepted writeback; nothing is spent");
      if (cmd.spendKey !== spendKey(id))
        refuse("identity_mismatch", `quota_spend: key ${cmd.spendKey} is not ${spendKey(id)}`);
      if (s.spend)
        return json(s.spend.usage) === json(cmd.usage)
          ? []
          : refuse("phase_conflict", "quota_spend: this turn was already spent (once per identity)");
      if (cmd.outcome.kind === "rejected")
        return failed(id, { code: "quota_spend_rejected", phase: "quota_spend", detail: cmd.outcome.reason });
      return [
        { type: "turn_quota_spent", data: { identity: id, spend_key: cmd.spendKey, usage: cmd.usage } },
      ];
    }
    case "record_scheduler_apply": {
      if (!s.spend) refuse("receipt_missing", "scheduler_apply: no quota_spend fact");
      if (cmd.effectRef !== schedulerRef(id))
        refuse(
          "identity_mismatch",
          `scheduler_apply: effect_ref ${cmd.effectRef} is not ${schedulerRef(id)}`,
        );
      if (s.acked) return [];
      if (s.applied)
        return json(s.applied.hint) === json(cmd.hint)
          ? []
          : refuse("phase_conflict", "scheduler_apply: another hint is being applied; ACK or fail it first");
      return [
        {
          type: "turn_scheduler_applied",
          data: { identity: id, effect_ref: cmd.effectRef, hint: cmd.hint },
        },
      ];
    }
    case "record_scheduler_ack": {
      if (s.acked)
        return cmd.outcome.kind === "ack" ? [] : refuse("phase_conflict", "scheduler_ack: already ACKed");
      if (!s.applied || s.applied.effectRef !== cmd.effectRef)
        refuse("receipt_missing", "scheduler_ack: no scheduler_apply fact for this effect_ref");
      return cmd.outcome.kind === "ack"
        ? [
            {
              type: "turn_scheduler_acked",
              data: { identity: id, effect_ref: cmd.effectRef, mode: cmd.outcome.mode },
            },
          ]
        : [
            {
              type: "turn_scheduler_apply_failed",
              data: { identity: id, effect_ref: cmd.effectRef, reason: cmd.outcome.reason },
            },
          ];
    }
    case "resolve_readback":
      return decideReadback(cmd, id, s);
    case "rebase":
      if (s.failure?.code !== "needs_rebase") refuse("phase_conflict", "rebase: only after needs_rebase");
      return [
        {
          type: "turn_rebased",
          data: { identity: id, from_revision: s.baseRevision ?? "", to_revision: cmd.toRevision },
        },
      ];
    case "release":
      if (s.writeback)
        refuse("phase_conflict", "release: the writeback is accepted; settle the turn, do not give it back");
      return [{ type: "turn_released", data: { identity: id, reason: cmd.reason } }];
  }
}

function decideValidation(
  receipt: Extract<TurnCommand, { type: "record_validation" }>["receipt"],
  id: TurnIdentity,
  s: TurnState,
): TurnEvent[] {
  const r = s.result;
  if (!r) return refuse("receipt_missing", "validation: no typed_result fact");
  if (s.receipt)
    return json(s.receipt) === json(receipt) ? [] : refuse("phase_conflict", "validation: already recorded");
  if (!receipt)
    return failed(id, { code: "receipt_missing", phase: "validation", detail: "no validation receipt" });
  if (receipt.kind === "run") {
    const v = receipt.receipt;
    if (r.kind !== "envelope")
      return refuse("identity_mismatch", "validation: a run receipt for a non-run result");
    if (v.run_id !== r.run_id || v.task_id !== r.task_id || v.goal_id !== id.goal_id)
      refuse(
        "identity_mismatch",
        `validation: receipt of run ${v.run_id} (${v.task_id}, ${v.goal_id}) is not this turn's run ${r.run_id}`,
      );
    if (v.goal_revision !== s.baseRevision)
      refuse(
        "identity_mismatch",
        `validation: receipt on revision ${v.goal_revision}, the turn is on ${s.baseRevision}`,
      );
    if (v.status !== "SUCCESS")
      return failed(id, {
        code: "receipt_missing",
        phase: "validation",
        detail: `the run is ${v.status}, not SUCCESS`,
      });
  } else {
    const digest = r.kind === "observation" ? r.result_hash : r.kind === "plan" ? r.delta_digest : null;
    if (digest !== receipt.digest)
      refuse("identity_mismatch", `validation: digest ${receipt.digest} is not the typed result's ${digest}`);
  }
  return [{ type: "turn_validated", data: { identity: id, receipt } }];
}

function decideReadback(
  cmd: Extract<TurnCommand, { type: "resolve_readback" }>,
  id: TurnIdentity,
  s: TurnState,
): TurnEvent[] {
  checkEffectRef(id, cmd.phase, cmd.effectRef);
  if (s.prepared[cmd.phase] !== cmd.effectRef)
    return refuse("receipt_missing", `readback: no prepared ${cmd.phase} effect ${cmd.effectRef}`);
  const rb = cmd.readback;
  const base = { identity: id, phase: cmd.phase, effect_ref: cmd.effectRef };
  if (rb.found === "unknown") {
    const detail = `readback of ${cmd.effectRef} is unknown: ${rb.reason}; failing closed`;
    // The same unknown again (a tick retrying before anyone repaired it) is no new fact.
    if (s.failure?.code === "blocked_health" && s.failure.phase === cmd.phase && s.failure.detail === detail)
      return [];
    return failed(id, { code: "blocked_health", phase: cmd.phase, detail });
  }
  if (rb.found === "absent") return [{ type: "turn_effect_readback", data: { ...base, found: "absent" } }];
  const p = rb.payload;
  if (p.phase !== cmd.phase)
    return refuse("identity_mismatch", `readback: a ${p.phase} payload for ${cmd.phase}`);
  const done: TurnEvent =
    p.phase === "host_execute"
      ? { type: "turn_host_executed", data: { identity: id, effect_ref: cmd.effectRef, run_ref: p.runRef } }
      : {
          type: "turn_writeback_accepted",
          data: { identity: id, effect_ref: cmd.effectRef, commit: p.commit, new_revision: p.newRevision },
        };
  return [{ type: "turn_effect_readback", data: { ...base, found: "committed" } }, done];
}

/** The turn decider: a goal turn's phases, each a fact of the goal stream. */
export const turnDecider: Decider<TurnState, TurnCommand, TurnEvent> = {
  initialState: initialTurnState,
  evolve: evolveTurn,
  decide: decideTurn,
};

/** What the host must do next for this turn. */
export type TurnNext =
  | { kind: "bind" }
  | { kind: "execute"; phase: EffectPhase; effectRef: string }
  | { kind: "readback"; phase: EffectPhase; effectRef: string }
  | { kind: "record"; phase: "typed_result" | "validation" | "quota_spend" }
  | { kind: "scheduler_apply"; effectRef: string }
  | { kind: "scheduler_ack"; effectRef: string }
  | { kind: "rebase_or_release"; currentRevision: string }
  | { kind: "retry_spend" }
  /** `retry`: the prepared effect whose readback failed; a repair (of the workspace, the store) may let a
   * fresh readback resolve it, so a tick looks it up again once before it reports the block. */
  | { kind: "blocked_health"; reason: string; retry: { phase: EffectPhase; effectRef: string } | null }
  | { kind: "repair"; failure: TurnFailure }
  | { kind: "released"; reason: string }
  | { kind: "done" };

/** A pure reading of the facts: the next step, including recovery of a prepared-but-unsettled effect. */
export function nextTurnPhase(s: TurnState): TurnNext {
  const id = s.identity;
  if (!id) return { kind: "bind" };
  if (s.released) return { kind: "released", reason: s.released };
  const f = s.failure;
  if (f?.code === "blocked_health") {
    const phase = f.phase === "host_execute" || f.phase === "durable_writeback" ? f.phase : null;
    const ref = phase ? s.prepared[phase] : undefined;
    return {
      kind: "blocked_health",
      reason: f.detail,
      retry: phase && ref ? { phase, effectRef: ref } : null,
    };
  }
  if (f?.code === "needs_rebase")
    return { kind: "rebase_or_release", currentRevision: f.current_revision ?? "" };
  if (f?.code === "quota_spend_rejected") return { kind: "retry_spend" };
  if (f) return { kind: "repair", failure: f };
  const hx = effectRef(id, "host_execute");
  const wb = effectRef(id, "durable_writeback");
  if (!s.host)
    return s.prepared.host_execute
      ? { kind: "readback", phase: "host_execute", effectRef: hx }
      : { kind: "execute", phase: "host_execute", effectRef: hx };
  if (!s.result) return { kind: "record", phase: "typed_result" };
  if (!s.receipt) return { kind: "record", phase: "validation" };
  if (!s.writeback)
    return s.prepared.durable_writeback
      ? { kind: "readback", phase: "durable_writeback", effectRef: wb }
      : { kind: "execute", phase: "durable_writeback", effectRef: wb };
  if (!s.spend) return { kind: "record", phase: "quota_spend" };
  const sched = schedulerRef(id);
  if (s.acked) return { kind: "done" };
  if (!s.applied) return { kind: "scheduler_apply", effectRef: sched };
  return { kind: "scheduler_ack", effectRef: sched };
}

/** The readback rule in one place: committed → reuse, absent → execute, unknown → fail closed. */
export function readbackDecision(
  found: "committed" | "absent" | "unknown",
): "reuse" | "execute" | "fail_closed" {
  return found === "committed" ? "reuse" : found === "absent" ? "execute" : "fail_closed";
}
