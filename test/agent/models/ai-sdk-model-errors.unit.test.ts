import { APICallError } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { aiSdkModel } from "../../../src/agent/models/ai-sdk-model.js";
import type { ModelRequest, ModelResponse } from "../../../src/agent/models/model.js";
import { mockResult } from "./mock-results.js";

const req: ModelRequest = {
  system: "s",
  messages: [{ role: "user", content: "hi", origin: "operator" }],
  tools: [],
};

function throwing(error: unknown, request: ModelRequest = req): Promise<ModelResponse> {
  const mock = new MockLanguageModelV3({
    doGenerate: async () => {
      throw error;
    },
  });
  return aiSdkModel("m", mock).generate(request);
}

function apiError(statusCode: number | undefined, headers?: Record<string, string>, message = "boom") {
  return new APICallError({
    message,
    url: "https://api.example/v1/messages",
    requestBodyValues: {},
    ...(statusCode === undefined ? {} : { statusCode }),
    ...(headers ? { responseHeaders: headers } : {}),
  });
}

describe("aiSdkModel: failures come back as values", () => {
  it("429 is a retryable rate_limit with retry-after in milliseconds", async () => {
    const response = await throwing(apiError(429, { "retry-after": "7" }));
    expect(response).toEqual({
      ok: false,
      error: {
        kind: "rate_limit",
        retryable: true,
        retryAfterMs: 7000,
        message: expect.stringContaining("429"),
      },
    });
    const ms = await throwing(apiError(429, { "retry-after-ms": "1500" }));
    expect(!ms.ok && ms.error.retryAfterMs).toBe(1500);
    const none = await throwing(apiError(429));
    expect(!none.ok && none.error).toMatchObject({ kind: "rate_limit", retryable: true });
    expect(!none.ok && "retryAfterMs" in none.error).toBe(false);
  });

  it("5xx and overloaded are retryable provider errors", async () => {
    for (const status of [500, 503, 529]) {
      const response = await throwing(apiError(status));
      expect(!response.ok && response.error).toMatchObject({ kind: "provider", retryable: true });
    }
    const overloaded = await throwing(new Error("Overloaded"));
    expect(!overloaded.ok && overloaded.error).toMatchObject({ kind: "provider", retryable: true });
  });

  it("401 and 403 are auth errors, not retryable", async () => {
    for (const status of [401, 403]) {
      const response = await throwing(apiError(status, undefined, "invalid x-api-key"));
      expect(!response.ok && response.error).toMatchObject({ kind: "auth", retryable: false });
      expect(!response.ok && response.error.message).toContain("invalid x-api-key");
    }
  });

  it("other 4xx (a bad request) is a provider error that is not retried", async () => {
    const response = await throwing(apiError(400, undefined, "prompt is too long"));
    expect(!response.ok && response.error).toMatchObject({ kind: "provider", retryable: false });
  });

  it("network failures are retryable network errors", async () => {
    const wrapped = await throwing(
      new APICallError({
        message: "Cannot connect to API: connect ECONNREFUSED",
        url: "u",
        requestBodyValues: {},
        isRetryable: true,
      }),
    );
    expect(!wrapped.ok && wrapped.error).toMatchObject({ kind: "network", retryable: true });
    const cause = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:11434"), { code: "ECONNREFUSED" });
    const raw = await throwing(new TypeError("fetch failed", { cause }));
    expect(!raw.ok && raw.error).toMatchObject({ kind: "network", retryable: true });
  });

  it("an aborted request is a timeout; a cancellation is not retried, a deadline is", async () => {
    const cancelled = new AbortController();
    cancelled.abort(new Error("operator interrupt"));
    const cancel = await throwing(new DOMException("aborted", "AbortError"), {
      ...req,
      signal: cancelled.signal,
    });
    expect(!cancel.ok && cancel.error).toMatchObject({ kind: "timeout", retryable: false });

    const deadline = new AbortController();
    deadline.abort(new DOMException("signal timed out", "TimeoutError"));
    const late = await throwing(new DOMException("aborted", "AbortError"), {
      ...req,
      signal: deadline.signal,
    });
    expect(!late.ok && late.error).toMatchObject({ kind: "timeout", retryable: true });
  });

  it("a content-filter finish (an Anthropic refusal) is a refusal", async () => {
    const mock = new MockLanguageModelV3({
      doGenerate: mockResult([{ type: "text", text: "I can't help with that." }], {
        finish: "content-filter",
        raw: "refusal",
      }),
    });
    const response = await aiSdkModel("m", mock).generate(req);
    expect(response).toEqual({
      ok: false,
      error: { kind: "refusal", retryable: false, message: expect.stringContaining("refusal") },
    });
  });

  it("never throws, whatever the provider throws", async () => {
    const hostile = new Proxy(
      {},
      {
        get() {
          throw new Error("getter trap");
        },
        getPrototypeOf() {
          throw new Error("prototype trap");
        },
      },
    );
    const special = [hostile, Object.create(null), Symbol("s"), 10n, undefined, null];
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.anything({ withNullPrototype: true, withBigInt: true }), fc.constantFrom(...special)),
        async (thrown) => {
          const response = await throwing(thrown);
          expect(response.ok).toBe(false);
          if (!response.ok) expect(typeof response.error.message).toBe("string");
        },
      ),
      { numRuns: 200 },
    );
  });
});
