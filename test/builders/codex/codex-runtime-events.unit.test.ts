import { describe, expect, it } from "vitest";
import { codexFacts, codexRuntimeEvents } from "../../../src/builders/codex/exec-events.js";
import { LoopgateEvent } from "../../../src/core/events/loopgate-event.js";

const parse = (type: string, data: unknown) =>
  LoopgateEvent.parse({
    id: "e1",
    type,
    data,
    meta: { at: "2026-01-01T00:00:00Z", origin: "agent_runtime" },
  });

// A transcript in the shape codex 0.169.0 prints: one command that failed, one file change, usage, a final message.
const jsonl = [
  { type: "thread.started", thread_id: "t-9" },
  { type: "turn.started" },
  {
    type: "item.completed",
    item: {
      type: "command_execution",
      command: "node --test",
      aggregated_output: "not ok 1",
      exit_code: 1,
      status: "failed",
    },
  },
  {
    type: "item.completed",
    item: { type: "file_change", changes: [{ path: "/w/src/a.js", kind: "update" }], status: "completed" },
  },
  { type: "item.completed", item: { type: "agent_message", text: "All tests pass." } },
  { type: "turn.completed", usage: { input_tokens: 120, cached_input_tokens: 100, output_tokens: 7 } },
]
  .map((l) => JSON.stringify(l))
  .join("\n");

describe("codexRuntimeEvents", () => {
  const events = codexRuntimeEvents(codexFacts(jsonl), 2, 0);

  it("records each command with its exit code, each file change, then the session with usage and the claim", () => {
    expect(events.map((e) => [e.type, (e.data as { tool?: string }).tool ?? null])).toEqual([
      ["agent_tool_observed", "command_execution"],
      ["agent_tool_observed", "file_change"],
      ["agent_session_finished", null],
    ]);
    expect(events[0]?.data).toMatchObject({
      agent: "codex",
      attempt: 2,
      session_id: "t-9",
      command: "node --test",
      exit_code: 1,
      excerpt: "not ok 1",
    });
    expect(events[1]?.data).toMatchObject({
      command: "/w/src/a.js",
      exit_code: null,
      excerpt: "update completed",
    });
    // input_tokens already count the cached ones (OpenAI usage): 120 in, 7 out, no cost reported.
    expect(events[2]?.data).toMatchObject({
      agent: "codex",
      input_tokens: 120,
      output_tokens: 7,
      total_cost_usd: null,
      num_turns: 1,
      subtype: "turn.completed",
      is_error: false,
      result_excerpt: "All tests pass.",
    });
  });

  it("every event is valid under the run log's own schema", () => {
    for (const e of events) expect(() => parse(e.type, e.data)).not.toThrow();
  });

  it("a failed turn, or a non-zero exit, is an error session", () => {
    const failed = codexRuntimeEvents(codexFacts('{"type":"turn.failed","error":{"message":"boom"}}'), 1, 1);
    expect(failed).toHaveLength(1);
    expect(failed[0]?.data).toMatchObject({
      subtype: "turn.failed",
      is_error: true,
      input_tokens: null,
      exit_code: 1,
    });
  });

  it("the schema refuses an agent it does not know", () => {
    const bad = { ...(events[2]?.data as object), agent: "other-agent" };
    expect(() => parse("agent_session_finished", bad)).toThrow();
  });
});
