import { z } from "zod";
import { declareEvent, type EventArea } from "../kernel/event-area.js";
import { attempt, ModelFailureKind, turn } from "../kernel/event-parts.js";
import { GoalPredicate } from "../task/goal-predicate.js";

/** The built-in agent's loop. Everything it does is one of these, appended before it is acted on. */
export const agentEvents = {
  /** The task author's goal, set before the first turn: operator evidence. */
  goal_set: declareEvent(["operator"], () =>
    z.object({
      attempt,
      condition: z.string().nullable(),
      predicates: z.array(GoalPredicate).min(1),
      max_turns: z.number().int().positive(),
    }),
  ),
  /** What the model answered: its text and tool calls are claims and requests, never evidence. */
  model_responded: declareEvent(["model"], () =>
    z.object({
      attempt,
      turn,
      step: z.number().int().positive(),
      text: z.string().max(100_000),
      tool_calls: z.array(z.object({ id: z.string(), name: z.string(), args: z.unknown() })),
      input_tokens: z.number().int().nonnegative(),
      output_tokens: z.number().int().nonnegative(),
      cost_usd: z.number().nonnegative().nullable(),
      finish_reason: z.string(),
    }),
  ),
  model_failed: declareEvent(["runtime"], () =>
    z.object({
      attempt,
      turn,
      step: z.number().int().positive(),
      kind: ModelFailureKind,
      message: z.string().max(4000),
      retryable: z.boolean(),
      retry: z.number().int().nonnegative(),
      backoff_ms: z.number().int().nonnegative().nullable(),
    }),
  ),
  tool_call_started: declareEvent(["runtime"], () =>
    z.object({
      attempt,
      turn,
      call_id: z.string(),
      name: z.string(),
      args: z.unknown(),
      mutating: z.boolean(),
    }),
  ),
  tool_call_finished: declareEvent(["runtime"], () =>
    z.object({
      attempt,
      call_id: z.string(),
      name: z.string(),
      valid: z.boolean(),
      is_error: z.boolean(),
      exit_code: z.number().int().nullable(),
      subject: z.string().max(20_000),
      content: z.string().max(40_000),
      duration_ms: z.number().nonnegative(),
    }),
  ),
  tool_call_abandoned: declareEvent(["runtime"], () =>
    z.object({ attempt, call_id: z.string(), reason: z.string().max(2000) }),
  ),
  workspace_touched: declareEvent(["runtime"], () =>
    z.object({ attempt, call_id: z.string(), observation_id: z.string() }),
  ),
  /** loopgate's own probe of a gate or file predicate at a turn's end (a gate probe may say so). */
  goal_probed: declareEvent(["runtime", "gate"], () =>
    z.object({
      attempt,
      turn,
      predicate: GoalPredicate,
      holds: z.boolean(),
      detail: z.string().max(2000),
    }),
  ),
  goal_evaluated: declareEvent(["runtime"], () =>
    z.object({
      attempt,
      turn,
      outcome: z.enum(["completed", "continuing", "blocked"]),
      unmet: z.array(z.string()),
      reason: z.string().max(2000),
    }),
  ),
  /** A prompt loopgate queued to keep the model going: never evidence of anything. */
  continuation_queued: declareEvent(["continuation"], () =>
    z.object({ attempt, turn, text: z.string().max(4000) }),
  ),
  budget_exhausted: declareEvent(["runtime"], () =>
    z.object({
      attempt: z.number().int().nonnegative(),
      cap: z.enum(["steps_per_turn", "turns", "tokens", "cost_usd", "wall_time", "model_retries"]),
      limit: z.number(),
      used: z.number(),
    }),
  ),
} as const satisfies EventArea;
