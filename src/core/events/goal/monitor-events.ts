import { z } from "zod";
import { declareEvent, type EventArea } from "../../kernel/event-area.js";
import { Timestamp } from "../../kernel/event-parts.js";

/**
 * The continuous monitor's facts in the goal stream, declared once: schema and origin, types inferred.
 * Composed into goal-events.ts's `goalEvents`. A monitor is armed by the `todo_added` of its
 * continuous_monitor todo (no event of its own); every poll fact carries the operation id that is the
 * turn's durable_writeback effect_ref, so readback is "is there a monitor fact with this operation id".
 * A material change's successor is a real `todo_added` (successor_of the monitor) in the same append.
 */

// Plain zod here (not goal-events.ts's types): goal-events.ts imports this file, so it cannot import back.
const TodoRef = z
  .string()
  .regex(/^todo_[a-z0-9_-]{3,64}$/, "a todo id is todo_ followed by 3 to 64 characters");
const Time = Timestamp;
const Id = z.string().min(1).max(200);
const Hash = z.string().min(1).max(200);

const Op = { todo_id: TodoRef, operation_id: Id, at: Time };

export const MonitorSuccessor = z.object({ todo_id: TodoRef, content: z.string().min(1).max(4000) });
export const MonitorFollowup = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("successor"), successor: MonitorSuccessor }),
  z.object({ kind: z.literal("no_followup"), rationale: z.string().min(1).max(2000) }),
]);

/** Why a poll produced no observation: it is never a material change. */
export const PollFailureKind = z.enum(["timeout", "exit_nonzero", "spawn_failed", "crashed"]);
export type PollFailureKind = z.infer<typeof PollFailureKind>;

export const monitorEvents = {
  /** The first poll: the result hash every later poll is compared with. */
  monitor_baseline_recorded: declareEvent(["runtime"], () =>
    z.object({ ...Op, result_hash: Hash, next_due_at: Time }),
  ),
  /** Due and the same hash: a no-change receipt; at the bound it asks for a replan. */
  monitor_no_change_recorded: declareEvent(["runtime"], () =>
    z.object({
      ...Op,
      result_hash: Hash,
      consecutive_no_change: z.number().int().positive(),
      next_due_at: Time,
      replan_requested: z.boolean(),
    }),
  ),
  /** A material change: opens generation `generation` (the last + 1). Its successor follows in the same append. */
  monitor_observation_recorded: declareEvent(["runtime"], () =>
    z.object({
      ...Op,
      result_hash: Hash,
      generation: z.number().int().positive(),
      next_due_at: Time,
    }),
  ),
  /** The successor a generation asked for (added by the `todo_added` before it in the same append). */
  monitor_successor_created: declareEvent(["runtime"], () =>
    z.object({ ...Op, generation: z.number().int().positive(), successor: MonitorSuccessor }),
  ),
  /**
   * The poll ran but gave no observation (timeout, non-zero exit, could not start): no hash, no change; the
   * next poll after the backoff. `consecutive_failures` (absent in logs written before it): this failure's
   * place in the run of failures; at the monitor's max_failures a `todo_blocked` of the monitor follows in
   * the same append and it polls no more until a person reopens it.
   */
  monitor_poll_failed: declareEvent(["runtime"], () =>
    z.object({
      ...Op,
      failure: PollFailureKind,
      exit_code: z.number().int().nullable(),
      detail: z.string().max(2000),
      next_due_at: Time,
      consecutive_failures: z.number().int().positive().optional(),
    }),
  ),
  /** Expiry, resume_when or a person's stop: the monitor todo is done, linked to a successor or no_followup. */
  monitor_completed: declareEvent(["runtime", "operator"], () =>
    z.object({ ...Op, reason: z.string().max(2000), followup: MonitorFollowup }),
  ),
} as const satisfies EventArea;

export type MonitorGoalEventType = keyof typeof monitorEvents;
export type MonitorEventData<K extends MonitorGoalEventType> = z.infer<(typeof monitorEvents)[K]["schema"]>;
/** A monitor fact of the goal stream. */
export type MonitorGoalEvent = {
  [K in MonitorGoalEventType]: { type: K; data: MonitorEventData<K> };
}[MonitorGoalEventType];
