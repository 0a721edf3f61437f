// What Claude Code 2.1.328 prints in stream-json when its provider is down (recorded against a refused
// port and a server answering 401, 429 and 500), and which of it means "the provider is down".
import { describe, expect, it } from "vitest";
import {
  ClaudeProviderWatch,
  providerDown,
  providerStatus,
  UNANSWERED_TRIES,
} from "../../../src/builders/claude/claude-provider-error.js";

const retry = (attempt: number, status: number | null, error: string) => ({
  type: "system",
  subtype: "api_retry",
  attempt,
  max_retries: 10,
  retry_delay_ms: 500 * 2 ** attempt,
  error_status: status,
  error,
  session_id: "s",
});
const apiErrorMessage = (text: string, status: number | null) => ({
  type: "assistant",
  message: { model: "<synthetic>", role: "assistant", content: [{ type: "text", text }] },
  error: "server_error",
  is_api_error_message: true,
  ...(status === null ? { api_error: "connection_failed" } : { api_error_status: status }),
});
const result = (text: string, status: number | null, terminal = "api_error") => ({
  type: "result",
  subtype: "success",
  is_error: true,
  terminal_reason: terminal,
  api_error_status: status,
  ...(status === null ? { api_error: "connection_failed" } : {}),
  result: text,
});
const progress = { type: "assistant", message: { content: [{ type: "text", text: "Working." }] } };

describe("ClaudeProviderWatch", () => {
  it("a refused port: down at the third unanswered try in a row, not before", () => {
    const w = new ClaudeProviderWatch();
    for (let i = 1; i < UNANSWERED_TRIES; i++) expect(w.observe(retry(i, null, "unknown"))).toBeNull();
    expect(w.observe(retry(UNANSWERED_TRIES, null, "unknown"))).toMatch(/^no answer on 3 tries in a row/);
  });

  it("an answer in between resets the count: a lost request now and then is forgiven", () => {
    const w = new ClaudeProviderWatch();
    w.observe(retry(1, null, "unknown"));
    w.observe(retry(2, null, "unknown"));
    w.observe(progress);
    w.observe(retry(1, null, "unknown"));
    expect(w.observe(retry(2, null, "unknown"))).toBeNull();
    w.observe(retry(3, 503, "server_error"));
    expect(w.observe(retry(4, null, "unknown"))).toBeNull();
  });

  it("refused credentials (401, 403): down at the first refusal", () => {
    expect(new ClaudeProviderWatch().observe(retry(1, 401, "authentication_failed"))).toMatch(/HTTP 401/);
    expect(new ClaudeProviderWatch().observe(retry(1, 403, "permission_denied"))).toMatch(/HTTP 403/);
  });

  it("429 and 5xx retries are left to Claude's own budget; its final API error is the failure", () => {
    const w = new ClaudeProviderWatch();
    for (let i = 1; i <= 10; i++) expect(w.observe(retry(i, i % 2 ? 429 : 529, "rate_limit"))).toBeNull();
    const text = "API Error: 429 rate limited";
    expect(w.observe(apiErrorMessage(text, 429))).toBe(text);
  });

  it("the result line alone is enough (Claude printed no retries: its budget was 0)", () => {
    const text = "API Error: Connection refused — a firewall or proxy may be blocking it (ECONNREFUSED)";
    expect(new ClaudeProviderWatch().observe(result(text, null))).toBe(text);
    expect(new ClaudeProviderWatch().observe(result("API Error: 500 boom", 500))).toBe("API Error: 500 boom");
  });

  it("a 400 or 404 is not the provider being down (a bad request, a scripted model out of responses)", () => {
    const w = new ClaudeProviderWatch();
    expect(w.observe(apiErrorMessage("API Error: 400 script_exhausted", 400))).toBeNull();
    expect(w.observe(result("API Error: 400 script_exhausted", 400))).toBeNull();
    expect(w.observe(result("API Error: 404 no such model", 404))).toBeNull();
  });

  it("an ordinary error result (the agent's own failure, no API error) is not the provider's", () => {
    const w = new ClaudeProviderWatch();
    const own = { type: "result", subtype: "error_max_turns", is_error: true, result: "" };
    expect(w.observe(own)).toBeNull();
    expect(w.observe({ type: "result", subtype: "success", is_error: false, result: "Done." })).toBeNull();
  });

  it("push reads whole lines across chunks, skips stderr noise, and keeps the first failure", () => {
    const w = new ClaudeProviderWatch();
    const text = [1, 2, 3].map((i) => JSON.stringify(retry(i, null, "unknown"))).join("\n");
    const cut = text.length - 10;
    expect(w.push(`warning: not json\n${text.slice(0, cut)}`)).toBeNull();
    expect(w.push(`${text.slice(cut)}\n`)).toMatch(/no answer on 3 tries/);
    w.observe(result("API Error: 500 later", 500));
    expect(w.failure).toMatch(/no answer on 3 tries/);
  });
});

describe("providerStatus / providerDown", () => {
  it("auth, timeout, rate limit and server statuses are the provider's; client errors are not", () => {
    expect([401, 403, 408, 429, 500, 502, 503, 529].every(providerStatus)).toBe(true);
    expect([200, 400, 404, 413, 422].some(providerStatus)).toBe(false);
  });

  it("names the provider and what it did", () => {
    expect(providerDown("http://127.0.0.1:9", "HTTP 401")).toBe(
      "the model provider at http://127.0.0.1:9 failed: HTTP 401",
    );
  });
});
