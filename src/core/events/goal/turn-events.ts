import { z } from "zod";
import { declareEvent, type EventArea } from "../../kernel/event-area.js";
import { LeaseOwner, Timestamp } from "../../kernel/event-parts.js";
import { ValidationReceipt } from "./validation-receipt.js";

/**
 * A governed turn (settlement) as goal-stream events, declared once: each fact with its schema and its
 * origin (loopgate's runtime alone writes them); every TypeScript type here is inferred from a schema.
 * Each fact carries the turn identity `goal_id + agent_id + turn_instance_id`; the binding ties it to
 * exactly one work item (a todo, a replan obligation or the acceptance items) and the goal revision it
 * starts from. goal-events.ts composes these into the goal area.
 */
const Name = z.string().min(1).max(200);
const Text = z.string().max(2000);
const At = Timestamp;

export const TurnIdentity = z.object({ goal_id: Name, agent_id: Name, turn_instance_id: Name });
export type TurnIdentity = z.infer<typeof TurnIdentity>;

export const TurnWork = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("todo"), todo_id: Name }),
  z.object({ kind: z.literal("replan"), obligation_id: Name }),
  /** The acceptance items proved fresh on the turn's revision once the advancement frontier is exhausted. */
  z.object({ kind: z.literal("acceptance"), acceptance_ids: z.array(Name).min(1).max(100) }),
]);
export type TurnWork = z.infer<typeof TurnWork>;

export const TURN_PHASES = [
  "host_execute",
  "typed_result",
  "validation",
  "durable_writeback",
  "quota_spend",
  "scheduler_apply",
  "scheduler_ack",
] as const;
export const TurnPhase = z.enum(TURN_PHASES);
export type TurnPhase = z.infer<typeof TurnPhase>;

/**
 * Phases whose effect lives outside the turn's stream and so is journaled as prepared first (a crash
 * after it is resolved by readback). The scheduler apply needs no readback: re-applying finds the host
 * cadence already matching and ACKs `host_match`.
 */
export const EffectPhase = z.enum(["host_execute", "durable_writeback"]);
export type EffectPhase = z.infer<typeof EffectPhase>;

/** What the host carried out: an envelope of the todo's task, a monitor observation, or a plan delta. */
export const TypedResult = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("envelope"),
    run_id: Name,
    task_id: Name,
    status: Name,
    envelope_digest: Name,
  }),
  z.object({ kind: z.literal("observation"), result_hash: Name }),
  z.object({ kind: z.literal("plan"), delta_digest: Name }),
]);
export type TypedResult = z.infer<typeof TypedResult>;

/** A validation receipt: a matching SUCCESS of a run, or a well-formed typed result (monitor, plan). */
export const TurnReceipt = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("run"), receipt: ValidationReceipt }),
  z.object({ kind: z.literal("typed"), digest: Name }),
]);
export type TurnReceipt = z.infer<typeof TurnReceipt>;

export const Usage = z.object({
  tokens: z.number().int().nonnegative(),
  cost_usd: z.number().nonnegative(),
  turns: z.number().int().nonnegative(),
});
export type Usage = z.infer<typeof Usage>;

/**
 * The hint a turn's scheduler_apply records. `terminal`: the host stops because the goal's terminal closure
 * holds (done, not paused: nothing to resume); absent in logs written before it was recorded.
 */
export const SchedulerHintFact = z.object({
  action: Name,
  not_before: At.nullable(),
  why: Text,
  terminal: z.literal(true).optional(),
});
export type SchedulerHintFact = z.infer<typeof SchedulerHintFact>;

export const TurnFailureCode = z.enum([
  "receipt_missing",
  "identity_mismatch",
  "writeback_rejected",
  "quota_spend_rejected",
  "needs_rebase",
  "blocked_health",
  "phase_conflict",
]);
export type TurnFailureCode = z.infer<typeof TurnFailureCode>;

/** A recorded failure (routes to repair or retry; the identity is kept for idempotency). */
export const TurnFailure = z.object({
  code: TurnFailureCode,
  phase: TurnPhase,
  detail: Text,
  current_revision: Name.optional(),
});
export type TurnFailure = z.infer<typeof TurnFailure>;

const withId = <T extends z.ZodRawShape>(shape: T) => z.object({ identity: TurnIdentity, ...shape });
const runtime = ["runtime"] as const;

/** The facts of one turn, in phase order. */
export const turnEvents = {
  turn_bound: declareEvent(runtime, () => withId({ work: TurnWork, base_revision: Name })),
  turn_effect_prepared: declareEvent(runtime, () => withId({ phase: EffectPhase, effect_ref: Name })),
  turn_effect_readback: declareEvent(runtime, () =>
    withId({ phase: EffectPhase, effect_ref: Name, found: z.enum(["committed", "absent"]) }),
  ),
  turn_host_executed: declareEvent(runtime, () => withId({ effect_ref: Name, run_ref: Name })),
  turn_typed_result: declareEvent(runtime, () => withId({ result: TypedResult })),
  turn_validated: declareEvent(runtime, () => withId({ receipt: TurnReceipt })),
  turn_writeback_accepted: declareEvent(runtime, () =>
    withId({ effect_ref: Name, commit: Name, new_revision: Name }),
  ),
  turn_quota_spent: declareEvent(runtime, () => withId({ spend_key: Name, usage: Usage })),
  turn_scheduler_applied: declareEvent(runtime, () => withId({ effect_ref: Name, hint: SchedulerHintFact })),
  turn_scheduler_acked: declareEvent(runtime, () =>
    withId({ effect_ref: Name, mode: z.enum(["host_match", "host_updated"]) }),
  ),
  turn_scheduler_apply_failed: declareEvent(runtime, () => withId({ effect_ref: Name, reason: Text })),
  turn_rebased: declareEvent(runtime, () =>
    withId({ from_revision: z.string().max(200), to_revision: Name }),
  ),
  turn_released: declareEvent(runtime, () => withId({ reason: Text })),
  turn_failed: declareEvent(runtime, () => withId({ failure: TurnFailure })),
} as const satisfies EventArea;

export type TurnEventType = keyof typeof turnEvents;
/** A turn fact as the turn decider emits it (the caller adds `id` and `meta`). */
export type TurnEvent = {
  [K in TurnEventType]: { type: K; data: z.infer<(typeof turnEvents)[K]["schema"]> };
}[TurnEventType];

/**
 * The goal's turn lease: one turn at a time per goal. `holder` is the agent the turn runs as, `owner`
 * the process (its token only it knows); `previous` is the lease it took over, and why. Who may run a
 * turn, not what a turn did: apart from the turn's facts, which carry an identity.
 */
export const turnLeaseEvents = {
  turn_lease_acquired: declareEvent(runtime, () =>
    z.object({
      holder: Name,
      owner: LeaseOwner,
      expires_at: At,
      previous: z
        .object({
          holder: Name,
          owner: LeaseOwner,
          expires_at: At,
          reason: z.enum(["expired", "owner_gone"]),
        })
        .nullable(),
    }),
  ),
  /** The holder's heartbeat: its lease now runs until `expires_at`. */
  turn_lease_heartbeat: declareEvent(runtime, () => z.object({ token: Name, expires_at: At })),
  turn_lease_released: declareEvent(runtime, () => z.object({ token: Name, reason: Text })),
} as const satisfies EventArea;

export type TurnLeaseEventType = keyof typeof turnLeaseEvents;
/** A lease event as the turn lease's rules emit it. */
export type TurnLeaseEvent = {
  [K in TurnLeaseEventType]: { type: K; data: z.infer<(typeof turnLeaseEvents)[K]["schema"]> };
}[TurnLeaseEventType];

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
