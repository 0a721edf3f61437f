// `is_error` of a Codex session says it really failed: a failed turn, an error Codex gave up with, or a
// non-zero exit loopgate did not cause. A warning item or a retry that then succeeded is no failure.
import { describe, expect, it } from "vitest";
import { codexFacts, codexSessionEvent } from "../../../src/builders/codex/exec-events.js";

const lines = (...events: object[]) => events.map((e) => JSON.stringify(e)).join("\n");
// What an honest SUCCESS prints with a model Codex has no metadata for (loopgate's `scripted`).
const honest = lines(
  { type: "thread.started", thread_id: "t" },
  {
    type: "item.completed",
    item: { id: "item_0", type: "error", message: "Model metadata for `scripted` not found." },
  },
  { type: "turn.started" },
  { type: "error", message: "Reconnecting... 1/5 (stream disconnected before completion)" },
  { type: "item.completed", item: { type: "agent_message", text: "Fixed." } },
  { type: "turn.completed", usage: { input_tokens: 10, cached_input_tokens: 0, output_tokens: 2 } },
);
const isError = (jsonl: string, exit: number | null, killedByLoopgate?: boolean) =>
  (
    codexSessionEvent(codexFacts(jsonl), 1, exit, killedByLoopgate === undefined ? {} : { killedByLoopgate })
      .data as { is_error: boolean }
  ).is_error;

describe("codexSessionEvent is_error", () => {
  it("an honest session with a warning item and a recovered retry, exit 0: no error", () => {
    expect(codexFacts(honest).errors.length).toBe(2);
    expect(isError(honest, 0)).toBe(false);
  });

  it("ended by loopgate (a verdict let it go, an interrupt): a signal or a kill's exit code is no error", () => {
    expect(isError(honest, null, true)).toBe(false);
    expect(isError(honest, 143, true)).toBe(false);
  });

  it("a non-zero exit of its own is an error", () => {
    expect(isError(honest, 1)).toBe(true);
    expect(isError(honest, 1, false)).toBe(true);
  });

  it("a failed turn, or an error event Codex gave up with, is an error even when loopgate killed it", () => {
    const failed = `${honest}\n${lines({ type: "turn.failed", error: { message: "boom" } })}`;
    expect(isError(failed, null, true)).toBe(true);
    const gaveUp = `${honest}\n${lines({ type: "error", message: "unexpected status 401 Unauthorized" })}`;
    expect(isError(gaveUp, 0)).toBe(true);
  });
});
