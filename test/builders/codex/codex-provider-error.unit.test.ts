// What Codex 0.169.0 prints with `exec --json` when its provider is down (recorded against a refused port
// and a server answering 401, 429 and 500), and which of it means "the provider is down".
import { describe, expect, it } from "vitest";
import {
  CodexProviderWatch,
  codexProviderFailure,
} from "../../../src/builders/codex/codex-provider-error.js";

const lines = (...events: object[]) => `${events.map((e) => JSON.stringify(e)).join("\n")}\n`;
const start = [
  { type: "thread.started", thread_id: "t" },
  {
    type: "item.completed",
    item: {
      id: "item_0",
      type: "error",
      message: "Model metadata for `m` not found. Defaulting to fallback metadata",
    },
  },
  { type: "turn.started" },
];
const noNetwork = {
  type: "error",
  message: "Reconnecting... waiting for network (Connection failed: error sending request)",
};
const unauthorized = "unexpected status 401 Unauthorized: bad key, url: http://127.0.0.1:1/v1/responses";

describe("CodexProviderWatch", () => {
  it("a refused port: down at the third unanswered try (Codex itself would wait without end)", () => {
    const w = new CodexProviderWatch();
    for (const e of start) w.observe(e);
    expect(w.observe(noNetwork)).toBeNull();
    expect(w.observe(noNetwork)).toBeNull();
    expect(w.observe(noNetwork)).toMatch(/^no answer on 3 tries in a row \(Codex: Reconnecting/);
  });

  it("401 retried, then the failed turn: down, with Codex's message", () => {
    const out = lines(
      ...start,
      ...[1, 2, 3, 4, 5].map((i) => ({ type: "error", message: `Reconnecting... ${i}/5 (${unauthorized})` })),
      { type: "error", message: unauthorized },
      { type: "turn.failed", error: { message: unauthorized } },
    );
    expect(codexProviderFailure(out)).toBe(unauthorized);
  });

  it("429 without retries: the status in its message is enough", () => {
    const msg = "exceeded retry limit, last status: 429 Too Many Requests";
    expect(codexProviderFailure(lines(...start, { type: "turn.failed", error: { message: msg } }))).toBe(msg);
  });

  it("500 shown as 'high demand' after retries: down (it retried, so it was the provider)", () => {
    const msg = "We're currently experiencing high demand, which may cause temporary errors.";
    const out = lines(
      ...start,
      { type: "error", message: `Reconnecting... 1/5 (${msg})` },
      { type: "turn.failed", error: { message: msg } },
    );
    expect(codexProviderFailure(out)).toBe(msg);
  });

  it("a failed turn that is not the provider's (no retry, no status, no connection) is left to the run", () => {
    const out = lines(...start, { type: "turn.failed", error: { message: "script_exhausted" } });
    expect(codexProviderFailure(out)).toBeNull();
    const bad = lines(...start, {
      type: "turn.failed",
      error: { message: "unexpected status 400 Bad Request" },
    });
    expect(codexProviderFailure(bad)).toBeNull();
  });

  it("retries that then succeed are no failure, and a completed turn clears them", () => {
    const out = lines(
      ...start,
      noNetwork,
      noNetwork,
      { type: "item.completed", item: { type: "agent_message", text: "hi" } },
      noNetwork,
      { type: "turn.completed", usage: {} },
      { type: "turn.failed", error: { message: "context window exceeded" } },
    );
    expect(codexProviderFailure(out)).toBeNull();
  });
});
