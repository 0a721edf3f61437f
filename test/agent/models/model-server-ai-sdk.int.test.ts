// model-server's non-streaming JSON answers read back by real, independent clients: the AI SDK's
// Anthropic, OpenAI Responses, OpenAI Chat and OpenAI-compatible providers (loopgate's own model
// adapters), each asking for one step and getting the scripted text and tool call back.
import { createAnthropic } from "@ai-sdk/anthropic";
import { createOpenAI } from "@ai-sdk/openai";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { aiSdkModel } from "../../../src/agent/models/ai-sdk-model.js";
import type { ModelRequest } from "../../../src/agent/models/model.js";
import { type ModelServer, startModelServer } from "../../../src/agent/models/model-server/server.js";
import type { Protocol } from "../../../src/agent/models/model-server/wire.js";
import { createModel } from "../../../src/agent/models/provider.js";
import { formatScript, parseScript, ScriptedResponseSchema } from "../../../src/agent/models/script-file.js";

let server: ModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const request: ModelRequest = {
  system: "test",
  messages: [{ role: "user", content: "add 2 and 3", origin: "operator" }],
  tools: [{ name: "add", description: "Add.", inputSchema: z.object({ a: z.number(), b: z.number() }) }],
};
const scripted = [
  ScriptedResponseSchema.parse({
    text: "Adding.",
    tool_calls: [{ name: "add", args: { a: 2, b: 3 } }],
    usage: { input_tokens: 11, output_tokens: 4 },
  }),
];

async function serve(protocol: Protocol) {
  // Served from a recorded-session file's text, as `--record` writes it (formatScript).
  server = await startModelServer({ protocol, script: parseScript(formatScript(scripted), "rec.yaml") });
  return server;
}

describe("model-server read by the AI SDK providers", () => {
  const cases: [string, Protocol, (url: string) => ReturnType<typeof createModel>][] = [
    [
      "anthropic",
      "anthropic",
      (url) => aiSdkModel("anthropic:m", createAnthropic({ apiKey: "k", baseURL: `${url}/v1` })("m")),
    ],
    [
      "openai responses",
      "openai-responses",
      (url) => aiSdkModel("openai:m", createOpenAI({ apiKey: "k", baseURL: `${url}/v1` }).responses("m")),
    ],
    [
      "openai chat",
      "openai-chat",
      (url) => createModel("openai:m", { baseUrl: `${url}/v1`, env: { OPENAI_API_KEY: "k" } }),
    ],
    [
      "openai-compatible",
      "openai-chat",
      (url) => createModel("openai-compatible:m", { baseUrl: `${url}/v1`, env: {} }),
    ],
  ];
  for (const [name, protocol, make] of cases)
    it(`${name}: text, the tool call and usage come back as scripted`, async () => {
      const s = await serve(protocol);
      const response = await make(s.url).generate(request);
      if (!response.ok) throw new Error(`${response.error.kind}: ${response.error.message}`);
      expect(response.text).toBe("Adding.");
      expect(response.toolCalls).toEqual([{ id: expect.any(String), name: "add", args: { a: 2, b: 3 } }]);
      expect(response.usage.inputTokens).toBe(11);
      expect(response.usage.outputTokens).toBe(4);
      expect(s.position).toBe(1);
      // Asked again: the script has no second response, and the client reports the error.
      const again = await make(s.url).generate(request);
      expect(again.ok).toBe(false);
      if (!again.ok) expect(again.error.message).toMatch(/script_exhausted/);
    });
});
