import { describe, expect, it } from "vitest";
import { codexFacts, describeFacts, excerpt } from "../../../src/builders/codex/exec-events.js";

// A `codex exec --json` transcript in the shape codex 0.169.0 printed on this machine (see the
// real-codex int test), plus a file_change item and a failed turn.
const lines = [
  { type: "thread.started", thread_id: "t-1" },
  { type: "turn.started" },
  {
    type: "item.started",
    item: {
      id: "item_1",
      type: "command_execution",
      command: "ls",
      aggregated_output: "",
      exit_code: null,
      status: "in_progress",
    },
  },
  {
    type: "item.completed",
    item: {
      id: "item_1",
      type: "command_execution",
      command: "ls",
      aggregated_output: "a\nb\n",
      exit_code: 0,
      status: "completed",
    },
  },
  {
    type: "item.completed",
    item: {
      id: "item_2",
      type: "command_execution",
      command: "false",
      aggregated_output: "",
      exit_code: 1,
      status: "failed",
    },
  },
  {
    type: "item.completed",
    item: {
      id: "item_3",
      type: "file_change",
      changes: [
        { path: "src/x.js", kind: "update" },
        { path: "src/y.js", kind: "add" },
      ],
      status: "completed",
    },
  },
  { type: "item.completed", item: { id: "item_4", type: "agent_message", text: "first" } },
  { type: "item.completed", item: { id: "item_5", type: "agent_message", text: "Done." } },
  { type: "turn.completed", usage: { input_tokens: 100, cached_input_tokens: 40, output_tokens: 7 } },
];
const jsonl = `${lines.map((l) => JSON.stringify(l)).join("\n")}\nWARNING: not json\n`;

describe("codexFacts", () => {
  it("keeps each completed command with its exit code, each file change, the usage and the last message", () => {
    const f = codexFacts(jsonl);
    expect(f.thread_id).toBe("t-1");
    expect(f.commands).toEqual([
      { command: "ls", exit_code: 0, status: "completed", output_excerpt: "a\nb\n" },
      { command: "false", exit_code: 1, status: "failed", output_excerpt: "" },
    ]);
    expect(f.file_changes).toEqual([
      { path: "src/x.js", kind: "update", status: "completed" },
      { path: "src/y.js", kind: "add", status: "completed" },
    ]);
    expect(f.usage).toEqual({ input_tokens: 100, cached_input_tokens: 40, output_tokens: 7 });
    expect(f.final_message).toBe("Done.");
    expect(f.turns_completed).toBe(1);
    expect(f.turn_failed).toBe(false);
    expect(f.unparsed_lines).toBe(1);
  });

  it("a failed turn and error events are kept; usage stays null when no turn completed", () => {
    const f = codexFacts(
      [
        JSON.stringify({ type: "error", message: "boom" }),
        JSON.stringify({ type: "turn.failed", error: { message: "script_exhausted" } }),
      ].join("\n"),
    );
    expect(f.turn_failed).toBe(true);
    expect(f.errors).toEqual(["boom", "script_exhausted"]);
    expect(f.usage).toBeNull();
    expect(f.final_message).toBe("");
  });

  it("items of unexpected shape, and non-objects, never throw", () => {
    const f = codexFacts(
      '{"type":"item.completed","item":42}\n[1,2]\n{"type":"item.completed","item":{"type":"command_execution"}}',
    );
    expect(f.commands).toEqual([{ command: "", exit_code: null, status: "", output_excerpt: "" }]);
    expect(f.unparsed_lines).toBe(1);
  });

  it("describeFacts ends with no message text (the claim is recorded apart) and names each command", () => {
    const text = describeFacts(codexFacts(jsonl));
    expect(text).toContain("codex: $ ls → exit 0");
    expect(text).toContain("codex: $ false → exit 1");
    expect(text).toContain("codex: file update src/x.js");
    expect(text).not.toContain("Done.");
  });

  it("excerpt keeps head and tail and says how much it cut", () => {
    const long = `${"h".repeat(1000)}${"m".repeat(5000)}${"t".repeat(1000)}`;
    const e = excerpt(long, 2000);
    expect(e.startsWith("h".repeat(600))).toBe(true);
    expect(e.endsWith("t".repeat(1000))).toBe(true);
    expect(e).toContain("5000 characters cut");
  });
});
