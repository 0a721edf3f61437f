// Hook reports are believed only when Claude Code's own stream-json holds the same call.
import { describe, expect, it } from "vitest";
import { goalAtStop } from "../../../src/builders/claude/claude-gates.js";
import { StreamJsonReader, type StreamToolCall } from "../../../src/builders/claude/stream-json.js";
import { confirmation, ToolReports, taskCompletion } from "../../../src/builders/claude/transcript.js";
import { toolFact } from "../../../src/builders/stop-gate/hook-input.js";
import type { EventData } from "../../../src/core/events/loopgate-event.js";

type Fact = EventData<"agent_tool_observed">;

/** A hook report of a Bash call, as toolFact makes it. */
const report = (
  id: string | undefined,
  command: string,
  exit: number | null = 0,
  over: Partial<Fact> = {},
): Fact => ({
  attempt: 1,
  agent: "claude-code",
  hook_event: exit === 0 ? "PostToolUse" : "PostToolUseFailure",
  session_id: "s",
  tool: "Bash",
  command,
  exit_code: exit,
  excerpt: "",
  ...(id ? { call_id: id } : {}),
  ...over,
});

/** Lines shaped as Claude Code 2.1.328 prints them with `--output-format stream-json --verbose`. */
const useLine = (id: string, name: string, input: Record<string, unknown>) =>
  `${JSON.stringify({
    type: "assistant",
    message: {
      id: "msg_1",
      type: "message",
      role: "assistant",
      content: [{ type: "tool_use", id, name, input }],
    },
    parent_tool_use_id: null,
    session_id: "s",
  })}\n`;
const resultLine = (id: string, content: string, isError: boolean) =>
  `${JSON.stringify({
    type: "user",
    message: {
      role: "user",
      content: [{ tool_use_id: id, type: "tool_result", content, is_error: isError }],
    },
    parent_tool_use_id: null,
    session_id: "s",
  })}\n`;

const call = (
  id: string,
  command: string,
  result: StreamToolCall["result"],
  name = "Bash",
): StreamToolCall => ({
  id,
  name,
  input: { command },
  result,
});

describe("StreamJsonReader keeps the tool calls of Claude's stream", () => {
  it("tool_use blocks of assistant lines, answered by tool_result blocks of user lines, across chunk boundaries", () => {
    const r = new StreamJsonReader();
    const text = useLine("toolu_1", "Bash", { command: "echo hi" }) + resultLine("toolu_1", "hi", false);
    r.push(text.slice(0, 37));
    r.push(text.slice(37, 300));
    r.push(text.slice(300));
    r.push(useLine("toolu_2", "Bash", { command: "exit 3" }));
    r.push(resultLine("toolu_2", "Exit code 3", true));
    expect([...r.calls.values()]).toEqual([
      { id: "toolu_1", name: "Bash", input: { command: "echo hi" }, result: { isError: false, text: "hi" } },
      {
        id: "toolu_2",
        name: "Bash",
        input: { command: "exit 3" },
        result: { isError: true, text: "Exit code 3" },
      },
    ]);
    expect(r.report.sessionId).toBe("s");
  });

  it("a later line cannot rewrite a call or its result; a result for a call it never printed is ignored", () => {
    const r = new StreamJsonReader();
    r.push(useLine("toolu_1", "Bash", { command: "npm test" }));
    r.push(resultLine("toolu_1", "Exit code 1", true));
    r.push(useLine("toolu_1", "Bash", { command: "true" }));
    r.push(resultLine("toolu_1", "ok", false));
    r.push(resultLine("toolu_9", "ok", false));
    expect([...r.calls.values()]).toEqual([
      {
        id: "toolu_1",
        name: "Bash",
        input: { command: "npm test" },
        result: { isError: true, text: "Exit code 1" },
      },
    ]);
  });

  it("readers of later processes share one map when given it", () => {
    const shared = new Map<string, StreamToolCall>();
    new StreamJsonReader(shared).push(useLine("toolu_1", "Bash", { command: "a" }));
    new StreamJsonReader(shared).push(resultLine("toolu_1", "", false));
    expect(shared.get("toolu_1")?.result).toEqual({ isError: false, text: "" });
  });
});

describe("confirmation of one report", () => {
  const open = { final: false, reported: false };
  const final = { final: true, reported: false };

  it("the same id, tool, command and a successful result confirm a PostToolUse", () => {
    expect(
      confirmation(report("t1", "npm test"), call("t1", "npm test", { isError: false, text: "" }), open),
    ).toEqual({
      confirmed: true,
    });
  });

  it("a PostToolUseFailure is confirmed by an error result with the same exit code, refused with another", () => {
    const failed = call("t1", "npm test", { isError: true, text: "Exit code 1\nnot ok" });
    expect(confirmation(report("t1", "npm test", 1), failed, open)).toEqual({ confirmed: true });
    expect(confirmation(report("t1", "npm test", 2), failed, open)?.confirmed).toBe(false);
    // A failure that names no exit code (a file tool's error) needs only the error.
    expect(confirmation(report("t1", "npm test", null), failed, open)).toEqual({ confirmed: true });
  });

  it("undecided while the stream may still print the call or its result; with final, unconfirmed", () => {
    expect(confirmation(report("t1", "npm test"), undefined, open)).toBeNull();
    expect(confirmation(report("t1", "npm test"), call("t1", "npm test", null), open)).toBeNull();
    expect(confirmation(report("t1", "npm test"), undefined, final)).toEqual({
      confirmed: false,
      why: "Claude Code's stream holds no tool_use t1",
    });
    expect(confirmation(report("t1", "npm test"), call("t1", "npm test", null), final)).toEqual({
      confirmed: false,
      why: "Claude Code's stream holds no result of tool_use t1",
    });
  });

  it("a report that says something else than the stream is refused at once", () => {
    const ran = call("t1", "npm test", { isError: false, text: "" });
    // another command under a real call's id
    expect(confirmation(report("t1", "npm test -- --grep nothing"), ran, open)?.confirmed).toBe(false);
    // another tool
    expect(confirmation(report("t1", "npm test", 0, { tool: "Write" }), ran, open)?.confirmed).toBe(false);
    // a success the stream recorded as a failure
    const failed = call("t1", "npm test", { isError: true, text: "Exit code 1" });
    expect(confirmation(report("t1", "npm test"), failed, open)?.confirmed).toBe(false);
    // a failure the stream recorded as a success
    expect(confirmation(report("t1", "npm test", 1), ran, open)?.confirmed).toBe(false);
    // no id at all, or an id already confirmed once (a replay after later edits)
    expect(confirmation(report(undefined, "npm test"), ran, open)?.confirmed).toBe(false);
    expect(confirmation(report("t1", "npm test"), ran, { final: false, reported: true })?.confirmed).toBe(
      false,
    );
    // a TaskCompleted is not a tool report
    expect(confirmation(report("t1", "x", null, { hook_event: "TaskCompleted" }), ran, open)?.confirmed).toBe(
      false,
    );
  });

  it("a Bash call sent to the background never stands for a success (its exit is not known when reported)", () => {
    // Claude Code 2.1.328 reports `sleep 1; exit 4` with run_in_background as a PostToolUse at once.
    const input = { command: "sleep 1; exit 4", run_in_background: true };
    const hook = toolFact(
      {
        session_id: "s",
        hook_event_name: "PostToolUse",
        tool_name: "Bash",
        tool_input: input,
        tool_use_id: "t1",
        tool_response: { stdout: "", stderr: "", interrupted: false, backgroundTaskId: "b1" },
      },
      1,
    );
    expect(hook.exit_code).toBeNull();
    const stream: StreamToolCall = {
      id: "t1",
      name: "Bash",
      input,
      result: { isError: false, text: "Command running in background" },
    };
    expect(confirmation(hook, stream, open)).toEqual({ confirmed: true });
    // A report claiming exit 0 for it is refused, and the confirmed one satisfies no command predicate.
    expect(confirmation(report("t1", "sleep 1; exit 4"), stream, open)?.confirmed).toBe(false);
    const goal = goalAtStop({
      predicates: [{ command_succeeded: "sleep 1; exit 4" }],
      facts: [{ ...hook, confirmed: true }],
      workspace: "/nonexistent",
      attempt: 1,
      sessionId: "s",
      stop: 1,
      blocksLeft: 1,
    });
    expect(goal.fact.outcome).toBe("continuing");
  });

  it("a file tool is matched on the file it names", () => {
    const write: StreamToolCall = {
      id: "t1",
      name: "Write",
      input: { file_path: "/w/a.js", content: "x" },
      result: { isError: false, text: "" },
    };
    expect(confirmation(report("t1", "/w/a.js", 0, { tool: "Write" }), write, open)).toEqual({
      confirmed: true,
    });
    expect(confirmation(report("t1", "/w/b.js", 0, { tool: "Write" }), write, open)?.confirmed).toBe(false);
  });
});

describe("ToolReports decides reports in the order they arrived", () => {
  it("a report waits for its result; a later one decided already waits behind it; then both, in order", () => {
    const calls = new Map<string, StreamToolCall>();
    const q = new ToolReports();
    q.report(report("t1", "a"));
    q.report(report("t2", "b"));
    calls.set("t1", call("t1", "a", null));
    calls.set("t2", call("t2", "b", { isError: false, text: "" }));
    expect(q.settle(calls, false)).toEqual([]);
    expect(q.waiting).toBe(2);
    calls.set("t1", call("t1", "a", { isError: false, text: "" }));
    const done = q.settle(calls, false);
    expect(done.map((d) => [d.fact.call_id, d.fact.confirmed, d.why])).toEqual([
      ["t1", true, null],
      ["t2", true, null],
    ]);
    expect(q.waiting).toBe(0);
  });

  it("a forged report (an id the stream never printed) is unconfirmed at the final settle, and the real ones keep their order", () => {
    const calls = new Map<string, StreamToolCall>([["t1", call("t1", "a", { isError: false, text: "" })]]);
    const q = new ToolReports();
    q.report(report("forged", "npm test"));
    q.report(report("t1", "a"));
    expect(q.settle(calls, false)).toEqual([]);
    const done = q.settle(calls, true);
    expect(done.map((d) => [d.fact.call_id, d.fact.confirmed])).toEqual([
      ["forged", false],
      ["t1", true],
    ]);
    expect(done[0]?.why).toBe("Claude Code's stream holds no tool_use forged");
  });

  it("a second report of a confirmed call (a replay) is unconfirmed", () => {
    const calls = new Map<string, StreamToolCall>([
      ["t1", call("t1", "npm test", { isError: false, text: "" })],
    ]);
    const q = new ToolReports();
    q.report(report("t1", "npm test"));
    q.report(report("t1", "npm test"));
    expect(q.settle(calls, false).map((d) => d.fact.confirmed)).toEqual([true, false]);
  });
});

describe("taskCompletion", () => {
  it("holds when the stream printed a TaskUpdate marking that task completed", () => {
    const calls = new Map<string, StreamToolCall>([
      ["t1", { id: "t1", name: "TaskUpdate", input: { taskId: "1", status: "in_progress" }, result: null }],
    ]);
    expect(taskCompletion(calls, "1")).toBe(false);
    calls.set("t2", {
      id: "t2",
      name: "TaskUpdate",
      input: { taskId: "1", status: "completed" },
      result: null,
    });
    expect(taskCompletion(calls, "1")).toBe(true);
    expect(taskCompletion(calls, "2")).toBe(false);
  });
});

describe("the goal at a Stop counts confirmed reports only", () => {
  const base = {
    predicates: [{ command_succeeded: "npm test" }],
    workspace: "/nonexistent",
    attempt: 1,
    sessionId: "s",
    stop: 1,
    blocksLeft: 2,
  };

  it("an unconfirmed success does not satisfy command_succeeded; a confirmed one does", () => {
    const forged = { ...report("x", "npm test"), confirmed: false };
    expect(goalAtStop({ ...base, facts: [forged] }).fact.outcome).toBe("continuing");
    const real = { ...report("t1", "npm test"), confirmed: true };
    expect(goalAtStop({ ...base, facts: [real] }).fact.outcome).toBe("completed");
  });

  it("an unconfirmed write after a confirmed success still makes it stale (doubt never helps the goal)", () => {
    const real = { ...report("t1", "npm test"), confirmed: true };
    const write = { ...report("x", "/w/a.js", 0, { tool: "Write" }), confirmed: false };
    expect(goalAtStop({ ...base, facts: [real, write] }).fact.outcome).toBe("continuing");
  });
});
