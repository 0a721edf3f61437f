import { z } from "zod";
import { LeaseOwner } from "../../kernel/event-parts.js";
import { TURN_PHASES } from "./turn-events.js";
import { ValidationReceipt } from "./validation-receipt.js";

/**
 * The governed turn's facts as goal-stream events: each phase of a turn and the goal's
 * turn lease, declared once with its origin (loopgate's runtime alone writes them). goal-events.ts
 * composes them into the goal area; the TS types of turn-events.ts are what these schemas infer
 * (test/core/goal/turn-event-decl.unit.test.ts checks it both ways).
 */
const Name = z.string().min(1).max(200);
const Text = z.string().max(2000);
const At = z.string().datetime({ offset: true });

const Identity = z.object({ goal_id: Name, agent_id: Name, turn_instance_id: Name });
const Work = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("todo"), todo_id: Name }),
  z.object({ kind: z.literal("replan"), obligation_id: Name }),
  z.object({ kind: z.literal("acceptance"), acceptance_ids: z.array(Name).min(1).max(100) }),
]);
const EffectPhase = z.enum(["host_execute", "durable_writeback"]);
const Phase = z.enum(TURN_PHASES);
const TypedResult = z.discriminatedUnion("kind", [
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
const Receipt = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("run"), receipt: ValidationReceipt }),
  z.object({ kind: z.literal("typed"), digest: Name }),
]);
const Usage = z.object({
  tokens: z.number().int().nonnegative(),
  cost_usd: z.number().nonnegative(),
  turns: z.number().int().nonnegative(),
});
const Hint = z.object({ action: Name, not_before: At.nullable(), why: Text });
const Failure = z.object({
  code: z.enum([
    "receipt_missing",
    "identity_mismatch",
    "writeback_rejected",
    "quota_spend_rejected",
    "needs_rebase",
    "blocked_health",
    "phase_conflict",
  ]),
  phase: Phase,
  detail: Text,
  current_revision: Name.optional(),
});

const withId = <T extends z.ZodRawShape>(shape: T) => z.object({ identity: Identity, ...shape });
const runtime = ["runtime"] as const;

export const turnEventDecls = {
  turn_bound: { origin: runtime, schema: withId({ work: Work, base_revision: Name }) },
  turn_effect_prepared: { origin: runtime, schema: withId({ phase: EffectPhase, effect_ref: Name }) },
  turn_effect_readback: {
    origin: runtime,
    schema: withId({ phase: EffectPhase, effect_ref: Name, found: z.enum(["committed", "absent"]) }),
  },
  turn_host_executed: { origin: runtime, schema: withId({ effect_ref: Name, run_ref: Name }) },
  turn_typed_result: { origin: runtime, schema: withId({ result: TypedResult }) },
  turn_validated: { origin: runtime, schema: withId({ receipt: Receipt }) },
  turn_writeback_accepted: {
    origin: runtime,
    schema: withId({ effect_ref: Name, commit: Name, new_revision: Name }),
  },
  turn_quota_spent: { origin: runtime, schema: withId({ spend_key: Name, usage: Usage }) },
  turn_scheduler_applied: { origin: runtime, schema: withId({ effect_ref: Name, hint: Hint }) },
  turn_scheduler_acked: {
    origin: runtime,
    schema: withId({ effect_ref: Name, mode: z.enum(["host_match", "host_updated"]) }),
  },
  turn_scheduler_apply_failed: { origin: runtime, schema: withId({ effect_ref: Name, reason: Text }) },
  turn_rebased: {
    origin: runtime,
    schema: withId({ from_revision: z.string().max(200), to_revision: Name }),
  },
  turn_released: { origin: runtime, schema: withId({ reason: Text }) },
  turn_failed: { origin: runtime, schema: withId({ failure: Failure }) },
  /**
   * The goal's turn lease: one turn at a time per goal. `holder` is the agent the turn runs as, `owner`
   * the process (its token only it knows); `previous` is the lease it took over, and why.
   */
  turn_lease_acquired: {
    origin: runtime,
    schema: z.object({
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
  },
  /** The holder's heartbeat: its lease now runs until `expires_at`. */
  turn_lease_heartbeat: { origin: runtime, schema: z.object({ token: Name, expires_at: At }) },
  turn_lease_released: { origin: runtime, schema: z.object({ token: Name, reason: Text }) },
} as const;

/** The lease events: who may run a turn, not what a turn did. */
export const TURN_LEASE_EVENTS = [
  "turn_lease_acquired",
  "turn_lease_heartbeat",
  "turn_lease_released",
] as const;
export type TurnLeaseEventType = (typeof TURN_LEASE_EVENTS)[number];
