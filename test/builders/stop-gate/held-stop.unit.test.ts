import { describe, expect, it } from "vitest";
import { HeldStop, stopAnswered } from "../../../src/builders/stop-gate/held-stop.js";
import { StopInput } from "../../../src/builders/stop-gate/hook-input.js";

const stopIn = (active: boolean) =>
  StopInput.parse({ session_id: "s1", hook_event_name: "Stop", stop_hook_active: active });

describe("HeldStop", () => {
  it("a Stop wakes the waiting attempt and waits for the builder's answer", async () => {
    const h = new HeldStop<number>();
    const woke = h.next();
    const reply = h.hold(stopIn(false));
    expect(await woke).toEqual({ kind: "stop", input: stopIn(false) });
    expect(h.holding).toBe(true);
    h.answer({ exit_code: 2, stdout: "", stderr: "fix it" });
    expect(await reply).toEqual({ exit_code: 2, stdout: "", stderr: "fix it" });
    expect(h.holding).toBe(false);
  });

  it("a wake with nobody waiting is kept for the next attempt", async () => {
    const h = new HeldStop<number>();
    h.wake({ kind: "exit", result: 3 });
    expect(await h.next()).toEqual({ kind: "exit", result: 3 });
  });

  it("a newer Stop supersedes an unanswered one with a block, never an exit 0", async () => {
    const h = new HeldStop<number>();
    const first = h.hold(stopIn(false));
    void h.hold(stopIn(true));
    expect((await first).exit_code).toBe(2);
    expect(h.holding).toBe(true);
  });
});

describe("stopAnswered", () => {
  it("records a block with its reason from stderr, an allow with its message from stdout", () => {
    const block = stopAnswered("codex", 2, stopIn(true), {
      exit_code: 2,
      stdout: "",
      stderr: "Required fix: x\n",
    });
    expect(block).toEqual({
      type: "stop_hook_answered",
      data: {
        attempt: 2,
        agent: "codex",
        session_id: "s1",
        decision: "block",
        stop_hook_active: true,
        reason: "Required fix: x",
      },
    });
    const allow = stopAnswered("claude-code", 1, stopIn(false), {
      exit_code: 0,
      stdout: '{"systemMessage":"ok"}\n',
      stderr: "",
    });
    expect(allow.data).toMatchObject({ decision: "allow", reason: '{"systemMessage":"ok"}' });
  });
});
