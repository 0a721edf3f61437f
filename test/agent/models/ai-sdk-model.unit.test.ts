import { MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { aiSdkModel } from "../../../src/agent/models/ai-sdk-model.js";
import type { ModelMessage, ModelRequest, ToolSpec } from "../../../src/agent/models/model.js";
import { mockResult, toolCallPart } from "./mock-results.js";

const tools: ToolSpec[] = [
  { name: "bash", description: "Run a command.", inputSchema: z.object({ command: z.string() }) },
  { name: "read_file", description: "Read a file.", inputSchema: z.object({ path: z.string() }) },
];

function request(messages: ModelMessage[], extra: Partial<ModelRequest> = {}): ModelRequest {
  return { system: "You are careful.", messages, tools, ...extra };
}

const conversation: ModelMessage[] = [
  { role: "user", content: "Fix the bug.", origin: "operator" },
  {
    role: "assistant",
    text: "Looking.",
    toolCalls: [
      { id: "c1", name: "bash", args: { command: "ls" } },
      { id: "c2", name: "read_file", args: { path: "a.js" } },
    ],
  },
  { role: "tool", callId: "c1", name: "bash", content: "a.js\n", isError: false },
  { role: "tool", callId: "c2", name: "read_file", content: "no such file", isError: true },
  { role: "assistant", text: "", toolCalls: [] },
  { role: "assistant", text: "", toolCalls: [{ id: "c3", name: "bash", args: "{not json" }] },
  { role: "tool", callId: "c3", name: "bash", content: "arguments are not JSON", isError: true },
  { role: "user", content: "Continue.", origin: "continuation" },
];

describe("aiSdkModel: the conversation sent to the provider", () => {
  it("maps roles, tool-call parts and tool-result parts (errors as error-text), in order", async () => {
    const mock = new MockLanguageModelV3({ doGenerate: mockResult([{ type: "text", text: "ok" }]) });
    const response = await aiSdkModel("anthropic:test", mock).generate(request(conversation));
    expect(response.ok).toBe(true);
    expect(mock.doGenerateCalls).toHaveLength(1);
    expect(mock.doGenerateCalls[0]?.prompt).toEqual([
      { role: "system", content: "You are careful." },
      { role: "user", content: [{ type: "text", text: "Fix the bug." }] },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Looking." },
          { type: "tool-call", toolCallId: "c1", toolName: "bash", input: { command: "ls" } },
          { type: "tool-call", toolCallId: "c2", toolName: "read_file", input: { path: "a.js" } },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "c1",
            toolName: "bash",
            output: { type: "text", value: "a.js\n" },
          },
          {
            type: "tool-result",
            toolCallId: "c2",
            toolName: "read_file",
            output: { type: "error-text", value: "no such file" },
          },
        ],
      },
      // the empty assistant turn is dropped; an invalid call's raw input goes back as {}
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "c3", toolName: "bash", input: {} }] },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "c3",
            toolName: "bash",
            output: { type: "error-text", value: "arguments are not JSON" },
          },
        ],
      },
      { role: "user", content: [{ type: "text", text: "Continue." }] },
    ]);
  });

  it("offers the tools as JSON schemas with their descriptions", async () => {
    const mock = new MockLanguageModelV3({ doGenerate: mockResult([{ type: "text", text: "ok" }]) });
    await aiSdkModel("m", mock).generate(request(conversation.slice(0, 1)));
    const offered = mock.doGenerateCalls[0]?.tools ?? [];
    expect(offered.map((t) => t.name)).toEqual(["bash", "read_file"]);
    expect(offered[0]).toMatchObject({
      type: "function",
      name: "bash",
      description: "Run a command.",
      inputSchema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
    });
  });

  it("sends no tools when there are none", async () => {
    const mock = new MockLanguageModelV3({ doGenerate: mockResult([{ type: "text", text: "ok" }]) });
    await aiSdkModel("m", mock).generate(request(conversation.slice(0, 1), { tools: [] }));
    expect(mock.doGenerateCalls[0]?.tools).toBeUndefined();
  });
});

describe("aiSdkModel: the response", () => {
  it("maps text and tool calls back with the provider's ids and parsed args", async () => {
    const mock = new MockLanguageModelV3({
      doGenerate: mockResult(
        [
          { type: "text", text: "Let me look." },
          toolCallPart("toolu_1", "bash", '{"command":"cat a.js"}'),
          toolCallPart("toolu_2", "read_file", '{"path":"b.js"}'),
        ],
        { finish: "tool-calls", input: 10, output: 5 },
      ),
    });
    const response = await aiSdkModel("m", mock).generate(request(conversation.slice(0, 1)));
    expect(response).toEqual({
      ok: true,
      text: "Let me look.",
      toolCalls: [
        { id: "toolu_1", name: "bash", args: { command: "cat a.js" } },
        { id: "toolu_2", name: "read_file", args: { path: "b.js" } },
      ],
      usage: { inputTokens: 10, outputTokens: 5, costUsd: null },
      finishReason: "tool-calls",
    });
  });

  it("passes invalid calls through for central validation: bad JSON, unknown tool, wrong types", async () => {
    const mock = new MockLanguageModelV3({
      doGenerate: mockResult(
        [
          toolCallPart("t1", "bash", '{"command": "ls"'),
          toolCallPart("t2", "delete_everything", '{"now":true}'),
          toolCallPart("t3", "bash", '{"command": 42}'),
        ],
        { finish: "tool-calls" },
      ),
    });
    const response = await aiSdkModel("m", mock).generate(request(conversation.slice(0, 1)));
    if (!response.ok) throw new Error(response.error.message);
    expect(response.toolCalls).toEqual([
      { id: "t1", name: "bash", args: '{"command": "ls"' },
      { id: "t2", name: "delete_everything", args: { now: true } },
      { id: "t3", name: "bash", args: { command: 42 } },
    ]);
  });

  it("reports usage with the approximate built-in price, an explicit price, or null", async () => {
    const result = mockResult([{ type: "text", text: "x" }], { input: 1000, output: 2000 });
    const sonnet = new MockLanguageModelV3({ modelId: "claude-sonnet-4-5-20250929", doGenerate: result });
    const priced = await aiSdkModel("anthropic:claude-sonnet-4-5-20250929", sonnet).generate(
      request(conversation.slice(0, 1)),
    );
    // $3 and $15 per million tokens: 1000 * 3e-6 + 2000 * 15e-6
    expect(priced.ok && priced.usage.costUsd).toBeCloseTo(0.033, 10);

    const explicit = await aiSdkModel("x", new MockLanguageModelV3({ doGenerate: result }), {
      inputPerMTok: 1,
      outputPerMTok: 2,
    }).generate(request(conversation.slice(0, 1)));
    expect(explicit.ok && explicit.usage).toEqual({ inputTokens: 1000, outputTokens: 2000, costUsd: 0.005 });

    const local = new MockLanguageModelV3({ modelId: "gpt-4o", doGenerate: result });
    const unknown = await aiSdkModel("openai-compatible:gpt-4o", local, null).generate(
      request(conversation.slice(0, 1)),
    );
    expect(unknown.ok && unknown.usage.costUsd).toBeNull();

    const noUsage = new MockLanguageModelV3({ modelId: "llama3", doGenerate: mockResult([]) });
    const none = await aiSdkModel("m", noUsage).generate(request(conversation.slice(0, 1)));
    expect(none.ok && none.usage).toEqual({ inputTokens: 0, outputTokens: 0, costUsd: null });
  });

  it("keeps finish reasons such as length", async () => {
    const mock = new MockLanguageModelV3({
      doGenerate: mockResult([{ type: "text", text: "cut" }], { finish: "length" }),
    });
    const response = await aiSdkModel("m", mock).generate(request(conversation.slice(0, 1)));
    expect(response.ok && response.finishReason).toBe("length");
  });
});
