import { describe, expect, it } from "vitest";
import { hookSettings } from "../../../src/builders/claude/claude-settings.js";
import { parseHookInput, toolFact } from "../../../src/builders/stop-gate/hook-input.js";
import { localStopReply } from "../../../src/cli/commands/hook/hook-stop.js";

const post = (o: Record<string, unknown>) => {
  const r = parseHookInput(JSON.stringify({ session_id: "s1", ...o }));
  if ("error" in r) throw new Error(r.error);
  if (r.input.hook_event_name !== "PostToolUse" && r.input.hook_event_name !== "PostToolUseFailure")
    throw new Error("not a tool hook");
  return r.input;
};

describe("Claude Code hook input", () => {
  it("a successful Bash call is exit 0 with its stdout and stderr", () => {
    const f = toolFact(
      post({
        hook_event_name: "PostToolUse",
        tool_name: "Bash",
        tool_input: { command: "npm test" },
        tool_response: { stdout: "ok 1", stderr: "warn", interrupted: false },
      }),
      2,
    );
    expect(f).toMatchObject({
      attempt: 2,
      tool: "Bash",
      command: "npm test",
      exit_code: 0,
      excerpt: "ok 1\nwarn",
    });
  });

  it("a failed Bash call takes N from `Exit code N`; a failure naming none is null, never 0", () => {
    const failed = post({
      hook_event_name: "PostToolUseFailure",
      tool_name: "Bash",
      tool_input: { command: "false" },
      error: "Exit code 3\nboom",
    });
    expect(toolFact(failed, 1).exit_code).toBe(3);
    const other = post({
      hook_event_name: "PostToolUseFailure",
      tool_name: "Write",
      tool_input: { file_path: "/x" },
      error: "EROFS",
    });
    expect(toolFact(other, 1)).toMatchObject({ exit_code: null, command: "/x" });
  });

  it("bad stdin is a message naming the field, not a throw", () => {
    expect(parseHookInput("not json")).toMatchObject({ error: expect.stringMatching(/not JSON/) });
    expect(
      parseHookInput(JSON.stringify({ hook_event_name: "Stop", stop_hook_active: "yes" })),
    ).toMatchObject({
      error: expect.stringMatching(/stop_hook_active/),
    });
    expect(parseHookInput(JSON.stringify({ hook_event_name: "Nope" }))).toHaveProperty("error");
  });

  it("settings declare Stop, PostToolUse, PostToolUseFailure and TaskCompleted with the same command", () => {
    const s = hookSettings("node /h/f.mjs", 90) as {
      hooks: Record<string, { hooks: { command: string; timeout: number }[] }[]>;
    };
    expect(Object.keys(s.hooks).sort()).toEqual([
      "PostToolUse",
      "PostToolUseFailure",
      "Stop",
      "TaskCompleted",
    ]);
    for (const entries of Object.values(s.hooks))
      expect(entries[0]?.hooks[0]).toEqual({ type: "command", command: "node /h/f.mjs", timeout: 90 });
  });
});

describe("the Stop answer of a user's own session", () => {
  const base = { reason: "r", runId: "R", fix: "make gate g pass", cap: 3 };
  it("SUCCESS lets Claude stop", () => {
    expect(localStopReply({ ...base, status: "SUCCESS", blocks: 1 }).reply.exit_code).toBe(0);
  });
  it("a failure blocks with the required fix and counts the block", () => {
    const r = localStopReply({ ...base, status: "ESCALATED", blocks: 0 });
    expect(r.reply.exit_code).toBe(2);
    expect(r.reply.stderr).toContain("make gate g pass");
    expect(r.blocks).toBe(1);
  });
  it("at loopgate's cap it lets Claude stop, saying the work is NOT verified", () => {
    const r = localStopReply({ ...base, status: "ESCALATED", blocks: 2 });
    expect(r.reply.exit_code).toBe(0);
    expect(r.reply.stdout).toMatch(/ESCALATED.*NOT verified/);
  });
  it("never lets a failure through before the cap (every blocks count below cap − 1)", () => {
    for (let cap = 1; cap <= 8; cap++)
      for (let blocks = 0; blocks < cap - 1; blocks++)
        expect(localStopReply({ ...base, cap, status: "TOOL_FAILURE", blocks }).reply.exit_code).toBe(2);
  });
});
