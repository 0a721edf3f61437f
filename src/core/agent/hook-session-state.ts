import { type RecordedEvent, streamOf } from "../events/loopgate-event.js";
import type { RunStatus } from "../kernel/event-parts.js";

/**
 * Where a user's own agent session that loopgate's hooks watch stands (`loopgate hook install`):
 * `verified` when a Stop verification was recorded after its last recorded tool call (whatever the verdict:
 * the gates had the last word on the folder as it was left); `unverified` otherwise, when a tool call
 * came after the last verification or no Stop was ever verified: the agent ended (or is still working)
 * with nothing checking the folder it left, for instance because it switched its hooks off.
 */
export type HookSessionState = "verified" | "unverified";

/** A projection of one session's stream (`claude-session-<id>`): rebuilt from its events, never stored. */
export interface HookSessionView {
  /** The session's id as its runtime reported it; null when no event of the stream names one. */
  session_id: string | null;
  state: HookSessionState;
  /** The task the hooks check it against, from the latest binding; null when none was recorded. */
  task_id: string | null;
  task_file: string | null;
  /** The session's folder, from the latest binding. */
  cwd: string | null;
  /** Tool calls its runtime reported (every PostToolUse and PostToolUseFailure recorded). */
  tool_calls: number;
  /** Tool calls recorded after the last Stop verification (all of them when none was recorded). */
  calls_since_verified: number;
  /** Stop verifications recorded. */
  verifications: number;
  /** The last Stop verification: its run and verdict (when `verified`, the session's outcome). */
  last_verification: { run_id: string; status: RunStatus; decision: "block" | "allow"; at: string } | null;
  /** When the last tool call was recorded. */
  last_tool_at: string | null;
  /** When the stream's last event was recorded. */
  last_activity_at: string | null;
}

/**
 * The view of one session stream, by the rule of `HookSessionState`. Order is the stream's (revision):
 * a tool call and a verification are compared by where they stand in the log, never by their clocks.
 */
export function projectHookSession(events: readonly RecordedEvent[]): HookSessionView {
  let sessionId: string | null = null;
  let binding: { task_id: string; task_file: string; cwd: string } | null = null;
  let toolCalls = 0;
  let sinceVerified = 0;
  let verifications = 0;
  let last: HookSessionView["last_verification"] = null;
  let lastToolAt: string | null = null;
  const sorted = streamOf(
    "hook-session",
    [...events].sort((a, b) => a.revision - b.revision),
  );
  for (const e of sorted) {
    switch (e.type) {
      case "agent_tool_observed":
        toolCalls++;
        sinceVerified++;
        lastToolAt = e.meta.at;
        sessionId ??= e.data.session_id || null;
        break;
      case "hook_session_bound":
        binding = { task_id: e.data.task_id, task_file: e.data.task_file, cwd: e.data.cwd };
        sessionId ??= e.data.session_id || null;
        break;
      case "hook_stop_verified":
        verifications++;
        sinceVerified = 0;
        last = { run_id: e.data.run_id, status: e.data.status, decision: e.data.decision, at: e.meta.at };
        sessionId ??= e.data.session_id || null;
        break;
      default:
        break;
    }
  }
  return {
    session_id: sessionId,
    state: last !== null && sinceVerified === 0 ? "verified" : "unverified",
    task_id: binding?.task_id ?? null,
    task_file: binding?.task_file ?? null,
    cwd: binding?.cwd ?? null,
    tool_calls: toolCalls,
    calls_since_verified: sinceVerified,
    verifications,
    last_verification: last,
    last_tool_at: lastToolAt,
    last_activity_at: sorted.at(-1)?.meta.at ?? null,
  };
}

/**
 * What to do next about a session: nothing when verified; when unverified, verify its folder with its
 * task (`loopgate verify TASK --workspace DIR`), or, when no binding names them, reinstall the hooks.
 */
export type HookSessionNext =
  | { kind: "none" }
  | { kind: "verify"; task_file: string; workspace: string }
  | { kind: "unknown_task" };

/** The next step of a session, from its view. Pure. */
export function nextForHookSession(v: HookSessionView): HookSessionNext {
  if (v.state === "verified") return { kind: "none" };
  if (v.task_file === null || v.cwd === null) return { kind: "unknown_task" };
  return { kind: "verify", task_file: v.task_file, workspace: v.cwd };
}
