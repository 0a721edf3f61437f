// The state of a user's own Claude Code session its installed hooks watch, given its stream's events.
// The rule under test: a session is `verified` exactly when a Stop verification was recorded after its
// last recorded tool call; otherwise (a call after the last verification, or no verification) `unverified`.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { nextForHookSession, projectHookSession } from "../../../src/core/agent/hook-session-state.js";
import type { RecordedEvent } from "../../../src/core/events/loopgate-event.js";

const SESSION = "7fbbada5-26da-42da-bee0-375d972d3f19";
const at = (n: number) => `2026-12-03T18:00:${String(n).padStart(2, "0")}.000Z`;

type Kind = "tool" | "verify" | "bind" | "goal";

/** A stream of these kinds, in order, as the hooks would have appended them. */
function stream(kinds: readonly (Kind | { verify: "SUCCESS" | "ESCALATED" | "TOOL_FAILURE" })[]) {
  return kinds.map((k, revision): RecordedEvent => {
    const base = {
      id: `e${revision}`,
      stream: `claude-session-${SESSION}`,
      revision,
      position: revision + 1,
    };
    const meta = (origin: "runtime" | "agent_runtime") => ({ at: at(revision), origin });
    if (k === "tool")
      return {
        ...base,
        type: "agent_tool_observed",
        data: {
          attempt: 1,
          agent: "claude-code",
          hook_event: "PostToolUse",
          session_id: SESSION,
          tool: "Bash",
          command: `echo ${revision}`,
          exit_code: 0,
          excerpt: "",
        },
        meta: meta("agent_runtime"),
      };
    if (k === "bind")
      return {
        ...base,
        type: "hook_session_bound",
        data: {
          agent: "claude-code",
          session_id: SESSION,
          task_id: "claude-add",
          task_file: `/tasks/t${revision}/task.yaml`,
          cwd: `/work/w${revision}`,
        },
        meta: meta("runtime"),
      };
    if (k === "goal")
      return {
        ...base,
        type: "agent_goal_evaluated",
        data: {
          attempt: 1,
          agent: "claude-code",
          session_id: SESSION,
          stop: 1,
          outcome: "continuing",
          unmet: ["command_succeeded: npm test"],
          reason: "unmet",
        },
        meta: meta("runtime"),
      };
    const status = k === "verify" ? "ESCALATED" : k.verify;
    return {
      ...base,
      type: "hook_stop_verified",
      data: {
        agent: "claude-code",
        session_id: SESSION,
        run_id: `run-of-${revision}`,
        status,
        reason: "r",
        decision: status === "SUCCESS" ? "allow" : "block",
      },
      meta: meta("runtime"),
    };
  });
}

describe("a hook session: verified or unverified", () => {
  it("given tool calls and no Stop verified (the hooks were switched off): unverified, verify its folder with its task", () => {
    const v = projectHookSession(stream(["bind", "tool", "tool"]));
    expect(v.state).toBe("unverified");
    expect(v.tool_calls).toBe(2);
    expect(v.calls_since_verified).toBe(2);
    expect(v.verifications).toBe(0);
    expect(v.last_verification).toBeNull();
    expect(v.session_id).toBe(SESSION);
    expect(v.last_tool_at).toBe(at(2));
    expect(v.last_activity_at).toBe(at(2));
    expect(nextForHookSession(v)).toEqual({
      kind: "verify",
      task_file: "/tasks/t0/task.yaml",
      workspace: "/work/w0",
    });
  });

  it("given a verified Stop after the last tool call: verified, with that verification's verdict; nothing to do", () => {
    const v = projectHookSession(stream(["bind", "tool", "tool", { verify: "SUCCESS" }]));
    expect(v.state).toBe("verified");
    expect(v.last_verification).toEqual({
      run_id: "run-of-3",
      status: "SUCCESS",
      decision: "allow",
      at: at(3),
    });
    expect(v.calls_since_verified).toBe(0);
    expect(nextForHookSession(v)).toEqual({ kind: "none" });
  });

  it("a verification that blocked and was the last fact is still the session's outcome (ESCALATED), not unverified", () => {
    const v = projectHookSession(stream(["bind", "tool", "verify"]));
    expect(v.state).toBe("verified");
    expect(v.last_verification?.status).toBe("ESCALATED");
  });

  it("given a tool call after the last verified Stop: unverified, the calls since it counted", () => {
    const v = projectHookSession(stream(["bind", "tool", { verify: "SUCCESS" }, "tool", "tool", "tool"]));
    expect(v.state).toBe("unverified");
    expect(v.tool_calls).toBe(4);
    expect(v.calls_since_verified).toBe(3);
    expect(v.verifications).toBe(1);
    expect(v.last_verification?.run_id).toBe("run-of-2");
  });

  it("a goal evaluation at a Stop is not a verification (no gate ran)", () => {
    const v = projectHookSession(stream(["bind", "tool", "goal"]));
    expect(v.state).toBe("unverified");
  });

  it("no binding recorded (hooks of an older loopgate): unverified with its task unknown", () => {
    const v = projectHookSession(stream(["tool"]));
    expect(v.task_file).toBeNull();
    expect(nextForHookSession(v)).toEqual({ kind: "unknown_task" });
  });

  it("the latest binding names the task and folder", () => {
    const v = projectHookSession(stream(["bind", "tool", "bind", "tool"]));
    expect(v.task_file).toBe("/tasks/t2/task.yaml");
    expect(v.cwd).toBe("/work/w2");
  });

  it("the stream's order decides, whatever order the events are handed in", () => {
    const events = stream(["bind", "tool", "verify"]);
    expect(projectHookSession([...events].reverse()).state).toBe("verified");
  });

  it("property: verified exactly when the last verification stands after the last tool call; counts agree", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom<Kind>("tool", "verify", "bind", "goal"), { maxLength: 30 }),
        (kinds) => {
          const v = projectHookSession(stream(kinds));
          const lastVerify = kinds.lastIndexOf("verify");
          const lastTool = kinds.lastIndexOf("tool");
          expect(v.state).toBe(lastVerify >= 0 && lastVerify > lastTool ? "verified" : "unverified");
          expect(v.tool_calls).toBe(kinds.filter((k) => k === "tool").length);
          expect(v.verifications).toBe(kinds.filter((k) => k === "verify").length);
          expect(v.calls_since_verified).toBe(kinds.slice(lastVerify + 1).filter((k) => k === "tool").length);
          expect(nextForHookSession(v).kind).toBe(
            v.state === "verified" ? "none" : kinds.includes("bind") ? "verify" : "unknown_task",
          );
        },
      ),
    );
  });
});
