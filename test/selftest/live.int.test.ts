import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { installRoot } from "../../src/selftest/check.js";
import { liveDimension, liveModelSpec } from "../../src/selftest/live.js";

const root = installRoot();
const measure = (env: NodeJS.ProcessEnv) => liveDimension({ root, readme: "", env, help: "" });

// A local OpenAI-compatible server: answers a chat completion, or fails with 500 for model "broken".
let server: Server;
let base = "";
beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => {
      body += d;
    });
    req.on("end", () => {
      const model = (JSON.parse(body) as { model: string }).model;
      if (model === "broken") {
        res.writeHead(500, { "content-type": "application/json" }).end('{"error":{"message":"down"}}');
        return;
      }
      res.writeHead(200, { "content-type": "application/json" }).end(
        JSON.stringify({
          id: "c1",
          object: "chat.completion",
          created: 0,
          model,
          choices: [{ index: 0, message: { role: "assistant", content: "ready" }, finish_reason: "stop" }],
          usage: { prompt_tokens: 12, completion_tokens: 1, total_tokens: 13 },
        }),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe("selftest: live dimension", () => {
  it("without a configured provider is NOT_VERIFIABLE with the reason, and calls nothing", async () => {
    const r = await measure({});
    expect(r).toMatchObject({ state: "NOT_VERIFIABLE", score: 0, ceiling: 10 });
    expect(r.checks[0]).toMatchObject({ ok: null, detail: expect.stringMatching(/no provider configured/) });
    expect(liveModelSpec({ LOOPGATE_OPENAI_COMPATIBLE_BASE_URL: base })).toMatchObject({
      reason: expect.stringMatching(/LOOPGATE_SELFTEST_MODEL/),
    });
    expect(liveModelSpec({ LOOPGATE_SELFTEST_MODEL: "scripted:x.yaml" })).toHaveProperty("reason");
    expect(liveModelSpec({ ANTHROPIC_API_KEY: "k" })).toEqual({ spec: "anthropic:claude-haiku-4-5" });
  });

  it("PASS when the configured provider answers", async () => {
    const r = await measure({
      LOOPGATE_OPENAI_COMPATIBLE_BASE_URL: base,
      LOOPGATE_SELFTEST_MODEL: "openai-compatible:tiny",
    });
    expect(r.state, JSON.stringify(r.checks)).toBe("PASS");
    expect(r.checks[0]?.detail).toMatch(/answered "ready"/);
  });

  it("FAIL, never a pass, when the configured provider errors or cannot be reached", async () => {
    const broken = await measure({
      LOOPGATE_OPENAI_COMPATIBLE_BASE_URL: base,
      LOOPGATE_SELFTEST_MODEL: "openai-compatible:broken",
    });
    expect(broken).toMatchObject({ state: "FAIL", score: 0 });
    const closed = await measure({
      LOOPGATE_OPENAI_COMPATIBLE_BASE_URL: "http://127.0.0.1:9/v1",
      LOOPGATE_SELFTEST_MODEL: "openai-compatible:tiny",
    });
    expect(closed).toMatchObject({ state: "FAIL", score: 0 });
  }, 60_000);
});
