import { z } from "zod";
import { declareEvent, type EventArea } from "../../kernel/event-area.js";
import { Timestamp } from "../../kernel/event-parts.js";

/**
 * A goal's notifications, declared once: the targets a goal file names (recorded with `goal_created`) and
 * the delivery facts in the goal stream. An occurrence (a gate starts waiting on a person, terminal
 * closure, blocked_health) is recorded as `notification_due` once per target under a stable key; each
 * attempt is claimed (`notification_attempted`, appended at the stream's expected revision, so two hosts
 * never send the same attempt) and ends in `notification_sent` or `notification_failed` (with the next
 * retry, or `null` once the cap in `max_attempts` is reached). The rule is core/goal/notify.ts.
 */

// Plain zod here (not goal-events.ts's types): goal-events.ts imports this file, so it cannot import back.
const Id = z.string().min(1).max(200);
const Time = Timestamp;
const TodoRef = z
  .string()
  .regex(/^todo_[a-z0-9_-]{3,64}$/, "a todo id is todo_ followed by 3 to 64 characters");

/** The occurrences a goal notifies about. */
export const NOTIFY_KINDS = ["gate_waiting", "terminal", "blocked_health"] as const;
export const NotifyKind = z.enum(NOTIFY_KINDS);
export type NotifyKind = z.infer<typeof NotifyKind>;

/** How often a target is tried and how long it waits between tries (resolved from the goal file). */
export const NotifyRetry = z.object({
  max_attempts: z.number().int().min(1).max(20),
  backoff_seconds: z.number().int().min(1).max(3600),
  max_backoff_seconds: z.number().int().min(1).max(86_400),
});
export type NotifyRetry = z.infer<typeof NotifyRetry>;

const TargetCommon = {
  /** The target's name in the goal file (default: its kind and index, e.g. `webhook-1`). */
  id: z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/),
  /** The occurrences it is told about. */
  on: z.array(NotifyKind).min(1).max(NOTIFY_KINDS.length),
  retry: NotifyRetry,
  timeout_seconds: z.number().int().min(1).max(600),
};

/** A notify target as the goal stream records it. */
export const NotifyTarget = z.discriminatedUnion("kind", [
  z.object({
    ...TargetCommon,
    kind: z.literal("command"),
    /** An argv, never a shell string; run in `cwd` (the goal file's folder). */
    argv: z.array(z.string().min(1).max(1000)).min(1).max(64),
    cwd: z.string().min(1).max(1000),
  }),
  z.object({
    ...TargetCommon,
    kind: z.literal("webhook"),
    /** The URL as written, or (`url_env`) the environment variable that holds it when it carries a secret. */
    url: z.string().url().max(1000).optional(),
    url_env: z
      .string()
      .regex(/^[A-Z_][A-Z0-9_]{0,127}$/)
      .optional(),
  }),
]);
export type NotifyTarget = z.infer<typeof NotifyTarget>;

const Result = {
  notification_id: Id,
  attempt: z.number().int().min(1).max(20),
};

export const notifyEvents = {
  /** An occurrence to tell one target about: the obligation, recorded before any attempt. */
  notification_due: declareEvent(["runtime"], () =>
    z.object({
      /** Stable across hosts and retries: the occurrence key and the target (the idempotency key sent). */
      notification_id: Id,
      occurrence: Id,
      kind: NotifyKind,
      target_id: Id,
      gate_id: TodoRef.optional(),
      /** The todos a waiting gate holds back. */
      todo_ids: z.array(TodoRef).max(200).optional(),
      /** The goal stream revision the occurrence was observed at. */
      goal_revision: z.number().int().nonnegative(),
      text: z.string().min(1).max(2000),
      /** What a person should run now (a gate's approve, `goal status` for health), or null. */
      command: z.string().max(2000).nullable(),
    }),
  ),
  /** An attempt claimed by one host; a claim with no result by `until` is in doubt and may be tried again. */
  notification_attempted: declareEvent(["runtime"], () => z.object({ ...Result, by: Id, until: Time })),
  notification_sent: declareEvent(["runtime"], () => z.object({ ...Result, detail: z.string().max(500) })),
  /** A failed attempt: `next_retry_at` null means the cap (`max_attempts`) is reached and it is given up. */
  notification_failed: declareEvent(["runtime"], () =>
    z.object({
      ...Result,
      error: z.string().min(1).max(500),
      max_attempts: z.number().int().min(1).max(20),
      next_retry_at: Time.nullable(),
    }),
  ),
} as const satisfies EventArea;
