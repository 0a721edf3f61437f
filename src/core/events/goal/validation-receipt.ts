import { z } from "zod";
import { RunStatus } from "../../kernel/event-parts.js";

// Apart from goal-events.ts so the governed turn's events (turn-events.ts), which goal-events.ts composes,
// can carry a receipt without an import cycle.

/** GOAL_LIMITS.name: the most characters of a goal name field. */
const NAME_MAX = 200;
const Name = z.string().min(1).max(NAME_MAX);

/**
 * A validation receipt, derived by loopgate from a run's envelope: which run, of which task, on which
 * goal and goal-workspace revision, with what verdict. Only a SUCCESS that matches proves anything.
 */
export const ValidationReceipt = z.object({
  run_id: Name,
  task_id: Name,
  task_digest: Name,
  status: RunStatus,
  envelope_digest: Name,
  goal_id: Name,
  goal_revision: Name,
});
export type ValidationReceipt = z.infer<typeof ValidationReceipt>;
