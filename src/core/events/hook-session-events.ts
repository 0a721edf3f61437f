import { z } from "zod";
import { LIMITS } from "../kernel/bounded.js";
import { declareEvent, type EventArea } from "../kernel/event-area.js";
import { RunStatus } from "../kernel/event-parts.js";
import { ExternalAgent } from "./agent-runtime-events.js";

/**
 * The facts of a user's own agent session that loopgate's installed hooks watch (`loopgate hook install`),
 * in the session's own stream beside the tool calls its runtime reported; never in a run's log. What they
 * add up to (verified or not, and how to verify it) is core/agent/hook-session-state.ts.
 */
export const hookSessionEvents = {
  /**
   * loopgate's hooks in a user's own session (`loopgate hook install`) recorded it against a task: the task
   * file its Stop verifies the session's folder with, and that folder as the agent's runtime reported it.
   * Appended once per session (again when the task or the folder changes), so that a session whose end
   * was never verified can name the `loopgate verify` that checks it.
   */
  hook_session_bound: declareEvent(["runtime"], () =>
    z.object({
      agent: ExternalAgent,
      session_id: z.string().max(200),
      task_id: z.string().max(200),
      /** The task file, absolute, as the installed hooks name it. */
      task_file: z.string().max(4096),
      /** The session's working folder (the hook input's `cwd`). */
      cwd: z.string().max(4096),
    }),
  ),
  /**
   * A Stop of a user's own session was verified: loopgate ran the held-out gates on its folder (the run
   * `run_id`, its verdict `status`) and answered `block` (exit 2, the required fix) or `allow` (exit 0).
   * A session whose last tool call comes after its last such fact ended unverified (core/agent/hook-session-state.ts).
   */
  hook_stop_verified: declareEvent(["runtime"], () =>
    z.object({
      agent: ExternalAgent,
      session_id: z.string().max(200),
      run_id: z.string().max(200),
      status: RunStatus,
      reason: z.string().max(LIMITS.reason),
      decision: z.enum(["block", "allow"]),
    }),
  ),
} as const satisfies EventArea;
