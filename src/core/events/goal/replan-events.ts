import { z } from "zod";
import { declareEvent, type EventArea } from "../../kernel/event-area.js";

/**
 * Replan facts in the goal stream (Vision / replan), declared once: schema and origin.
 * Composed into goal-events.ts's `goalEvents` (which this file cannot import: plain zod here).
 * - `replan_noop_recorded`: an answer with no delta. Recorded, so the attempt is visible, but it answers
 *   nothing: the obligation stays.
 * - `vision_closed`: the current stage is accepted and closed; its successor todo is added in the same append.
 * - `replan_answered`: the receipt of an answer given under an operation id (a planner turn's writeback).
 * - `change_compensated`: a rollback of an accepted change, as a compensation: the revert commit (recorded
 *   as the new revision in the same append) and a successor. History is never rewritten.
 * - `vision_retired`: an agent's route ends: retired (nobody follows it on) or superseded by another agent's
 *   route (`superseded_by`, recorded before it or in the same append). Its checkpoint is what it was read against.
 */
const Name = z.string().min(1).max(200);
const TodoRef = z
  .string()
  .regex(/^todo_[a-z0-9_-]{3,64}$/, "a todo id is todo_ followed by 3 to 64 characters");
const Reason = z.string().max(2000);
const Checkpoint = z.object({
  goal_revision: Name,
  acceptance_version: z.number().int().nonnegative(),
});

export const replanEvents = {
  replan_noop_recorded: declareEvent(["runtime", "operator"], () =>
    z.object({ agent_id: Name, obligation: z.string().max(400), reason: Reason }),
  ),
  vision_closed: declareEvent(["runtime", "operator"], () =>
    z.object({ agent_id: Name, reason: Reason, successor_id: TodoRef, checkpoint: Checkpoint }),
  ),
  /** The receipt of one answer (delta or noop) under the turn's operation id: readback finds it, a retry replays. */
  replan_answered: declareEvent(["runtime", "operator"], () =>
    z.object({
      agent_id: Name,
      obligation: z.string().max(400),
      operation_id: Name,
      outcome: z.enum(["delta", "replan_noop"]),
    }),
  ),
  vision_retired: declareEvent(["runtime", "operator"], () =>
    z.object({
      agent_id: Name,
      reason: z.string().min(1).max(2000),
      superseded_by: Name.nullable(),
      checkpoint: Checkpoint,
    }),
  ),
  change_compensated: declareEvent(["runtime", "operator"], () =>
    z.object({
      reverted_revision: Name,
      revert_revision: Name,
      reason: z.string().min(1).max(2000),
      successor_id: TodoRef,
      turn_id: Name.optional(),
    }),
  ),
} as const satisfies EventArea;
