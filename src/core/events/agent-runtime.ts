import { z } from "zod";
import { LIMITS } from "../bounded.js";
import { attempt, excerpt } from "../event-parts.js";
import type { EventArea } from "./define.js";

/** The external agents whose runtime reports facts through hooks or event streams loopgate owns. */
export const ExternalAgent = z.enum(["claude-code", "codex"]);

/**
 * What an external agent's own runtime reported (Claude Code's hooks, Codex's exec events): origin
 * `agent_runtime`, good for step appraisal and goal predicates, never for the verdict, which only gates decide.
 */
export const agentRuntimeEvents = {
  /**
   * A tool call the agent's runtime reported (Claude Code's PostToolUse or PostToolUseFailure, Codex's
   * command_execution): the command, its exit code, the head and tail of its output, as reported.
   */
  agent_tool_observed: {
    origin: ["agent_runtime"],
    schema: z.object({
      attempt,
      agent: ExternalAgent,
      hook_event: z.enum(["PostToolUse", "PostToolUseFailure", "TaskCompleted", "item.completed"]),
      session_id: z.string().max(200),
      tool: z.string().max(200),
      /** The Bash command, or the file path of a file tool; "" when the tool has neither. */
      command: z.string().max(4000),
      exit_code: z.number().int().nullable(),
      excerpt,
    }),
  },
  /** An external agent session ended: its own result line (turns, cost, usage). */
  agent_session_finished: {
    origin: ["agent_runtime"],
    schema: z.object({
      attempt: z.number().int().nonnegative(),
      agent: ExternalAgent,
      session_id: z.string().max(200),
      exit_code: z.number().int().nullable(),
      subtype: z.string().max(200).nullable(),
      is_error: z.boolean().nullable(),
      num_turns: z.number().int().nonnegative().nullable(),
      total_cost_usd: z.number().nonnegative().nullable(),
      input_tokens: z.number().int().nonnegative().nullable(),
      output_tokens: z.number().int().nonnegative().nullable(),
      result_excerpt: z.string().max(4000),
    }),
  },
  /**
   * loopgate's answer to an external agent's Stop hook (its own decision, origin runtime): `block` (exit 2,
   * the required fix or the failure as the reason), `allow` (exit 0, the run's verdict as the message).
   */
  stop_hook_answered: {
    origin: ["runtime"],
    schema: z.object({
      attempt: z.number().int().nonnegative(),
      agent: ExternalAgent,
      session_id: z.string().max(200),
      decision: z.enum(["block", "allow"]),
      /** The Stop carried `stop_hook_active` (the agent was already continuing after a block). */
      stop_hook_active: z.boolean(),
      reason: z.string().max(LIMITS.reason),
    }),
  },
  /** A hook loopgate owns could not do its work (it then blocked, never let the agent stop unchecked). */
  hook_failed: {
    origin: ["runtime"],
    schema: z.object({
      attempt: z.number().int().nonnegative(),
      hook_event: z.string().max(100),
      reason: z.string().max(LIMITS.reason),
    }),
  },
} as const satisfies EventArea;
