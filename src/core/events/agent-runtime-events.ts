import { z } from "zod";
import { LIMITS } from "../kernel/bounded.js";
import { declareEvent, type EventArea } from "../kernel/event-area.js";
import { attempt, excerpt } from "../kernel/event-parts.js";

/** The external agents whose runtime reports facts through hooks or event streams loopgate owns. */
export const ExternalAgent = z.enum(["claude-code", "codex"]);

/** A task of an external agent's task list, as its runtime reported it (fields it did not report are absent). */
const RuntimeTask = z.object({
  id: z.string().max(200),
  subject: z.string().max(4000).optional(),
  description: z.string().max(20_000).optional(),
  status: z.string().max(100).optional(),
});

/**
 * What an external agent's own runtime reported (Claude Code's hooks, Codex's exec events): origin
 * `agent_runtime`, good for step appraisal and goal predicates, never for the verdict, which only gates decide.
 */
export const agentRuntimeEvents = {
  /**
   * A tool call the agent's runtime reported (Claude Code's PostToolUse or PostToolUseFailure, Codex's
   * command_execution): the command, its exit code, the head and tail of its output, as reported.
   */
  agent_tool_observed: declareEvent(["agent_runtime"], () =>
    z.object({
      attempt,
      agent: ExternalAgent,
      hook_event: z.enum(["PostToolUse", "PostToolUseFailure", "TaskCompleted", "item.completed"]),
      session_id: z.string().max(200),
      tool: z.string().max(200),
      /** The Bash command, or the file path of a file tool; "" when the tool has neither. */
      command: z.string().max(4000),
      exit_code: z.number().int().nullable(),
      excerpt,
      /** The runtime's own id of the call (Claude Code's tool_use_id), when it gives one. */
      call_id: z.string().max(200).optional(),
      /** A task-list call (Claude Code's TaskCreate/TaskUpdate): the task it created or changed. */
      task: RuntimeTask.optional(),
      /**
       * Under `loopgate claude`: whether Claude Code's own stream (its stdout, which loopgate reads) holds
       * this call (same tool_use id, tool, command and outcome). A hook report reaches loopgate over a socket
       * the agent can reach too; `false` (a report the stream does not hold) never satisfies a goal.
       * Absent where the fact is the runtime's record itself (Codex's exec events) or no stream is read.
       */
      confirmed: z.boolean().optional(),
    }),
  ),
  /**
   * loopgate appraised a step of an external agent's task list when the agent marked it completed
   * (Claude Code's TaskCompleted): the span of reported calls since it went in progress, and the frozen
   * check loopgate ran in its own sandbox. `blocked`: the completion was refused with `rendered`.
   */
  agent_step_appraised: declareEvent(["runtime"], () =>
    z.object({
      attempt,
      agent: ExternalAgent,
      session_id: z.string().max(200),
      task_id: z.string().max(200),
      step: z.string().max(4000),
      check: z
        .object({
          command: z.string().max(4000),
          status: z.enum(["passed", "failed", "refused", "unavailable", "skipped"]),
          exit_code: z.number().int().nullable(),
          detail: z.string().max(2000),
        })
        .nullable(),
      finding: z
        .enum(["landed", "null_step", "ended_on_failure", "ended_on_refusal", "check_failed"])
        .nullable(),
      calls: z.number().int().nonnegative().nullable(),
      blocked: z.boolean(),
      rendered: z.string().max(4000),
    }),
  ),
  /**
   * The task's goal judged at an external agent's Stop over its runtime facts (see core/agent/stop-condition.ts):
   * `continuing` blocks the Stop with the unmet predicates; `completed` and `blocked` (no block left) let
   * the Stop go on to the held-out gates, which alone decide the verdict.
   */
  agent_goal_evaluated: declareEvent(["runtime"], () =>
    z.object({
      attempt,
      agent: ExternalAgent,
      session_id: z.string().max(200),
      stop: z.number().int().positive(),
      outcome: z.enum(["completed", "continuing", "blocked"]),
      unmet: z.array(z.string().max(600)).max(100),
      reason: z.string().max(2000),
    }),
  ),
  /** An external agent session ended: its own result line (turns, cost, usage). */
  agent_session_finished: declareEvent(["agent_runtime"], () =>
    z.object({
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
  ),
  /**
   * loopgate's answer to an external agent's Stop hook (its own decision, origin runtime): `block` (exit 2,
   * the required fix or the failure as the reason), `allow` (exit 0, the run's verdict as the message).
   */
  stop_hook_answered: declareEvent(["runtime"], () =>
    z.object({
      attempt: z.number().int().nonnegative(),
      agent: ExternalAgent,
      session_id: z.string().max(200),
      decision: z.enum(["block", "allow"]),
      /** The Stop carried `stop_hook_active` (the agent was already continuing after a block). */
      stop_hook_active: z.boolean(),
      reason: z.string().max(LIMITS.reason),
    }),
  ),
  /** A hook loopgate owns could not do its work (it then blocked, never let the agent stop unchecked). */
  hook_failed: declareEvent(["runtime"], () =>
    z.object({
      attempt: z.number().int().nonnegative(),
      hook_event: z.string().max(100),
      reason: z.string().max(LIMITS.reason),
    }),
  ),
} as const satisfies EventArea;
