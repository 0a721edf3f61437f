import { createHash } from "node:crypto";
import { lstatSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { sessionStream } from "../builders/stop-gate/hook-input.js";
import { normalizePath, type ObservedFile, type RecordedCall } from "../core/self-check/audit.js";
import type { SelfCheckSubmission } from "../core/self-check/schemas.js";
import type { EventStore } from "../store/kernel/event-store.js";
import { readRegularFile } from "../workspace/safe-read.js";

/** The largest artifact an agent's self-check may name as evidence (hashed in memory). */
const EVIDENCE_BYTES = 256 * 1024 * 1024;

/**
 * The tool calls a self-check submitted through `loopgate mcp` may cite: the frozen checks this server
 * ran itself (ids `loopgate-check-N`, named in todo_write's result) and the calls Claude Code's runtime
 * reported through loopgate's PostToolUse hook (`loopgate hook post-tool`, stored in the session's
 * stream `claude-session-<id>` with Claude's tool_use_id). A call found in neither is not evidence.
 */
export async function recordedCalls(
  store: EventStore,
  own: ReadonlyMap<string, RecordedCall>,
  sessionId: string | undefined,
): Promise<Map<string, RecordedCall>> {
  const calls = new Map<string, RecordedCall>();
  const streams = sessionId
    ? [sessionStream(sessionId)]
    : (await store.listStreams({ prefix: "claude-session-" })).map((s) => s.stream);
  for (const stream of streams)
    for (const e of await store.readStream(stream))
      if (e.type === "agent_tool_observed" && e.data.call_id && e.meta.origin === "agent_runtime")
        calls.set(e.data.call_id, {
          name: e.data.tool,
          exitCode: e.data.exit_code,
          isError: e.data.hook_event === "PostToolUseFailure" || e.data.exit_code !== 0,
          subject: e.data.command,
          content: e.data.excerpt,
        });
  // loopgate's own runs win over a runtime report claiming the same id.
  for (const [id, c] of own) calls.set(id, c);
  return calls;
}

/**
 * The store stream where `loopgate mcp` keeps its plan (each todo_write's `todo_written`, origin
 * runtime), so that a TaskCompleted hook of the same session can find an MCP step's frozen check.
 */
export const mcpPlanStream = (o: { sessionId?: string | undefined; taskId: string }) =>
  o.sessionId
    ? `mcp-plan-${o.sessionId.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 100)}`
    : `mcp-plan-task-${o.taskId.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 100)}`;

/** What loopgate sees now of the artifacts a submission cites (workspace files only; others are absent). */
export function observeCited(workspace: string, check: SelfCheckSubmission): Map<string, ObservedFile> {
  const seen = new Map<string, ObservedFile>();
  for (const a of check.artifactEvidence) {
    const p = normalizePath(a.path);
    if (isAbsolute(p) || p === ".." || p.startsWith("../")) continue;
    try {
      const st = lstatSync(join(workspace, p));
      if (!st.isFile()) {
        seen.set(p, { type: st.isDirectory() ? "dir" : "other", size: st.size, hash: "" });
        continue;
      }
      // Opened without following links or blocking: the agent can swap the file for a FIFO after lstat.
      const read = readRegularFile(join(workspace, p), EVIDENCE_BYTES);
      if (!read.ok) {
        seen.set(p, { type: "other", size: st.size, hash: "" });
        continue;
      }
      const hash = createHash("sha256").update(read.bytes).digest("hex");
      seen.set(p, { type: "file", size: read.bytes.length, hash });
    } catch {
      // absent: verifyEvidence reads a missing entry as "does not exist"
    }
  }
  return seen;
}
