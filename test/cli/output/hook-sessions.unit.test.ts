// How `runs` and `status` show a hook session: the verify hint pastes (real paths, shell-quoted, the
// store), and the exit code of `status SESSION` follows the state (3 unverified, else the verdict's code).
import { describe, expect, it } from "vitest";
import {
  hookSessionLines,
  hookSessionRow,
  hookSessionStatus,
} from "../../../src/cli/output/hook-sessions.js";
import type { RecordedEvent } from "../../../src/core/events/loopgate-event.js";

const hints = { me: "loopgate", storeArg: " --store /var/lg" };
const STREAM = "claude-session-s1";
const at = "2026-12-03T18:00:00.000Z";

const tool = (revision: number): RecordedEvent => ({
  id: `t${revision}`,
  stream: STREAM,
  revision,
  position: revision + 1,
  type: "agent_tool_observed",
  data: {
    attempt: 1,
    agent: "claude-code",
    hook_event: "PostToolUse",
    session_id: "s1",
    tool: "Bash",
    command: "ls",
    exit_code: 0,
    excerpt: "",
  },
  meta: { at, origin: "agent_runtime" },
});
const bound = (revision: number, taskFile: string, cwd: string): RecordedEvent => ({
  id: `b${revision}`,
  stream: STREAM,
  revision,
  position: revision + 1,
  type: "hook_session_bound",
  data: { agent: "claude-code", session_id: "s1", task_id: "add", task_file: taskFile, cwd },
  meta: { at, origin: "runtime" },
});
const verified = (revision: number, status: "SUCCESS" | "ESCALATED"): RecordedEvent => ({
  id: `v${revision}`,
  stream: STREAM,
  revision,
  position: revision + 1,
  type: "hook_stop_verified",
  data: {
    agent: "claude-code",
    session_id: "s1",
    run_id: "20261203-180000-abcdef",
    status,
    reason: "r",
    decision: status === "SUCCESS" ? "allow" : "block",
  },
  meta: { at, origin: "runtime" },
});

describe("a hook session as the CLI shows it", () => {
  it("unverified: the hint is `verify TASK --workspace DIR` with each path shell-quoted and the store; status exits 3", () => {
    const row = hookSessionRow(STREAM, [bound(0, "/tasks/my task.yaml", "/w/it's"), tool(1)], hints);
    expect(row.kind).toBe("hook-session");
    expect(row.hint).toBe(`loopgate verify '/tasks/my task.yaml' --workspace '/w/it'\\''s' --store /var/lg`);
    expect(hookSessionLines(row)).toContain(`  verify it: ${row.hint}\n`);
    const st = hookSessionStatus(row, hints);
    expect(st.exit).toBe(3);
    expect(st.text).toMatch(/^UNVERIFIED · hook session s1 · task add · 1 tool call\(s\)\n/);
    expect(st.text).toContain(`loopgate events ${STREAM} --store /var/lg`);
  });

  it("verified: no hint, and status exits with the verdict's code (0 SUCCESS, 1 ESCALATED)", () => {
    const ok = hookSessionRow(STREAM, [bound(0, "/t.yaml", "/w"), tool(1), verified(2, "SUCCESS")], hints);
    expect(ok.hint).toBeNull();
    expect(hookSessionLines(ok)).not.toContain("verify it:");
    expect(hookSessionStatus(ok, hints).exit).toBe(0);
    const no = hookSessionRow(STREAM, [bound(0, "/t.yaml", "/w"), tool(1), verified(2, "ESCALATED")], hints);
    expect(hookSessionStatus(no, hints).exit).toBe(1);
    expect(hookSessionStatus(no, hints).text).toContain(
      "loopgate status 20261203-180000-abcdef --store /var/lg",
    );
  });

  it("a tool call after the last verified Stop makes it unverified again, with the hint", () => {
    const row = hookSessionRow(STREAM, [bound(0, "/t.yaml", "/w"), verified(1, "SUCCESS"), tool(2)], hints);
    expect(row.state).toBe("unverified");
    expect(row.hint).toBe("loopgate verify /t.yaml --workspace /w --store /var/lg");
    expect(hookSessionLines(row)).toContain("1 of 1 tool call(s) after the last verified Stop");
  });

  it("a name from outside is shown on one line: a newline in the folder cannot forge a second line", () => {
    const row = hookSessionRow(STREAM, [bound(0, "/t.yaml", "/w\nUNVERIFIED · forged"), tool(1)], hints);
    const text = hookSessionStatus(row, hints).text;
    expect(text.split("\n").filter((l) => l.startsWith("UNVERIFIED"))).toHaveLength(1);
  });
});
