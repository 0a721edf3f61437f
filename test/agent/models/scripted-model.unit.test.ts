import { describe, expect, it } from "vitest";
import type { ModelRequest } from "../../../src/agent/models/model.js";
import { parseScript } from "../../../src/agent/models/script-file.js";
import { scriptedModel } from "../../../src/agent/models/scripted-model.js";
import { InputError } from "../../../src/core/kernel/errors.js";

const req = (content: string): ModelRequest => ({
  system: "s",
  messages: [{ role: "user", content, origin: "operator" }],
  tools: [],
});

function parseError(text: string, file = "fix.yaml"): string {
  try {
    parseScript(text, file);
  } catch (error) {
    expect(error).toBeInstanceOf(InputError);
    return (error as Error).message;
  }
  throw new Error("expected parseScript to fail");
}

describe("scripted model file", () => {
  it("reads a YAML list of responses", () => {
    const script = parseScript(
      [
        "- text: Looking around.",
        "  tool_calls:",
        "    - name: bash",
        "      args: { command: ls }",
        "  usage: { input_tokens: 12, output_tokens: 3 }",
        "- text: Done.",
      ].join("\n"),
      "fix.yaml",
    );
    expect(script).toEqual([
      {
        text: "Looking around.",
        tool_calls: [{ name: "bash", args: { command: "ls" } }],
        usage: { input_tokens: 12, output_tokens: 3 },
      },
      { text: "Done.", tool_calls: [] },
    ]);
  });

  it("reads JSON, and the {responses: [...]} form", () => {
    const json = '{"responses": [{"tool_calls": [{"name": "read_file", "args": {"path": "a"}}]}, {}]}';
    expect(parseScript(json, "s.json")).toEqual([
      { text: "", tool_calls: [{ name: "read_file", args: { path: "a" } }] },
      { text: "", tool_calls: [] },
    ]);
    expect(parseScript('[{"text": "hi"}]', "s.json")).toEqual([{ text: "hi", tool_calls: [] }]);
  });

  it("names the file, the line and the field of a bad value", () => {
    const message = parseError(["- text: ok", "- tool_calls:", "    - args: { command: ls }"].join("\n"));
    expect(message).toContain("fix.yaml:3: [1].tool_calls[0].name:");
  });

  it("rejects unknown fields (a typo must not silently drop a tool call)", () => {
    const message = parseError(["- text: ok", "  tool_call:", "    - name: bash"].join("\n"));
    expect(message).toMatch(/fix\.yaml:2: \[0\]: .*"tool_call"/);
  });

  it("rejects bad usage, bad YAML, and a file that is not a list", () => {
    expect(parseError(["- text: a", "  usage: { input_tokens: -1, output_tokens: 2 }"].join("\n"))).toContain(
      "fix.yaml:2: [0].usage.input_tokens:",
    );
    expect(parseError("- text: [unclosed\n")).toMatch(/^fix\.yaml:\d+: not valid YAML/);
    expect(parseError("just a string")).toMatch(/^fix\.yaml: a scripted model file is a list/);
    expect(parseError("responses:\n  - text: 3\n")).toContain("fix.yaml:2: responses[0].text:");
  });
});

describe("scriptedModel", () => {
  const script = [
    {
      text: "one",
      tool_calls: [
        { name: "bash", args: { command: "ls" } },
        { name: "read_file", args: { path: "x" } },
      ],
    },
    { tool_calls: [{ name: "bash", args: { command: "pwd" } }] },
    { text: "done", usage: { input_tokens: 5, output_tokens: 1 } },
  ];

  it("answers one response per request, with deterministic ids call_<step>_<index>", async () => {
    const model = scriptedModel(script, "scripted:fix.yaml");
    const first = await model.generate(req("a"));
    const second = await model.generate(req("b"));
    const third = await model.generate(req("c"));
    expect(first).toEqual({
      ok: true,
      text: "one",
      toolCalls: [
        { id: "call_1_0", name: "bash", args: { command: "ls" } },
        { id: "call_1_1", name: "read_file", args: { path: "x" } },
      ],
      usage: { inputTokens: 0, outputTokens: 0, costUsd: 0 },
      finishReason: "tool-calls",
    });
    expect(second.ok && second.toolCalls.map((c) => c.id)).toEqual(["call_2_0"]);
    expect(third).toEqual({
      ok: true,
      text: "done",
      toolCalls: [],
      usage: { inputTokens: 5, outputTokens: 1, costUsd: 0 },
      finishReason: "stop",
    });
    expect(model.requests.map((r) => r.messages[0]?.role === "user" && r.messages[0].content)).toEqual([
      "a",
      "b",
      "c",
    ]);
  });

  it("fails loudly when asked for more than it has", async () => {
    const model = scriptedModel(script.slice(0, 2));
    await model.generate(req("a"));
    await model.generate(req("b"));
    const response = await model.generate(req("c"));
    expect(response).toEqual({
      ok: false,
      error: {
        kind: "script_exhausted",
        retryable: false,
        message: "scripted model: asked for response 3 but the script has 2",
      },
    });
    expect(model.requests).toHaveLength(3);
  });

  it("starts at a position, keeping the ids the original run saw", async () => {
    const model = scriptedModel(script, "s", { position: 1 });
    const response = await model.generate(req("resumed"));
    expect(response.ok && response.toolCalls).toEqual([
      { id: "call_2_0", name: "bash", args: { command: "pwd" } },
    ]);
    expect(model.position).toBe(2);
    expect(() => scriptedModel(script, "s", { position: 4 })).toThrow(/position 4 is outside the script/);
  });

  it("uses recorded ids and finish reasons when the script has them", async () => {
    const model = scriptedModel([
      { tool_calls: [{ id: "toolu_9", name: "bash", args: {} }], finish_reason: "length" },
    ]);
    const response = await model.generate(req("a"));
    expect(response.ok && response.toolCalls[0]?.id).toBe("toolu_9");
    expect(response.ok && response.finishReason).toBe("length");
  });
});
