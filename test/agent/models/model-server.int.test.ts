// model-server over real HTTP: each protocol's wire shape, side requests that consume nothing,
// the request log, and the loud failure when the script runs out.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type ModelServer, startModelServer } from "../../../src/agent/models/model-server/server.js";
import { type ScriptedResponseInput, ScriptedResponseSchema } from "../../../src/agent/models/script-file.js";

let server: ModelServer | undefined;
const dirs: string[] = [];
afterEach(async () => {
  await server?.close();
  server = undefined;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const script = (responses: ScriptedResponseInput[]) => responses.map((r) => ScriptedResponseSchema.parse(r));

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${server?.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, type: res.headers.get("content-type") ?? "", text: await res.text() };
}

/** Splits an SSE body into {event, data} records (blank-line separated, per the SSE format). */
function sse(text: string): { event?: string; data: string }[] {
  return text
    .split("\n\n")
    .filter((b) => b.trim() !== "")
    .map((block) => {
      const lines = block.split("\n");
      const event = lines.find((l) => l.startsWith("event: "))?.slice(7);
      const data = lines
        .filter((l) => l.startsWith("data: "))
        .map((l) => l.slice(6))
        .join("\n");
      return event === undefined ? { data } : { event, data };
    });
}

const anthropicBody = (extra: Record<string, unknown> = {}) => ({
  model: "claude-test",
  max_tokens: 100,
  stream: true,
  messages: [{ role: "user", content: "hi" }],
  tools: [{ name: "Bash", input_schema: { type: "object" } }],
  ...extra,
});

describe("model-server --protocol anthropic", () => {
  it("streams text and tool_use blocks that reassemble to the scripted response", async () => {
    server = await startModelServer({
      protocol: "anthropic",
      script: script([{ text: "Running it.", tool_calls: [{ name: "bash", args: { command: "ls -a" } }] }]),
    });
    const r = await post("/v1/messages?beta=true", anthropicBody(), { "x-api-key": "sk-secret-value" });
    expect(r.status).toBe(200);
    expect(r.type).toContain("text/event-stream");
    const events = sse(r.text);
    for (const e of events) expect(JSON.parse(e.data).type).toBe(e.event);
    const names = events.map((e) => e.event);
    expect(names[0]).toBe("message_start");
    expect(names.at(-2)).toBe("message_delta");
    expect(names.at(-1)).toBe("message_stop");
    // Reassemble the blocks as a client does: start, then deltas appended, per index.
    const blocks: Record<number, { type: string; text: string; json: string; name?: string; id?: string }> =
      {};
    for (const e of events.map((x) => JSON.parse(x.data))) {
      if (e.type === "content_block_start")
        blocks[e.index] = {
          type: e.content_block.type,
          text: "",
          json: "",
          name: e.content_block.name,
          id: e.content_block.id,
        };
      if (e.type === "content_block_delta") {
        const b = blocks[e.index];
        if (!b) throw new Error("delta before start");
        if (e.delta.type === "text_delta") b.text += e.delta.text;
        if (e.delta.type === "input_json_delta") b.json += e.delta.partial_json;
      }
    }
    expect(blocks[0]).toMatchObject({ type: "text", text: "Running it." });
    // `bash` is mapped to the Bash tool the request offers.
    expect(blocks[1]).toMatchObject({ type: "tool_use", name: "Bash", id: "toolu_1_0" });
    expect(JSON.parse(blocks[1]?.json ?? "")).toEqual({ command: "ls -a" });
    const delta = JSON.parse(events.at(-2)?.data ?? "{}");
    expect(delta.delta.stop_reason).toBe("tool_use");
    expect(server.requests[0]?.headers["x-api-key"]).toBe("[redacted]");
  });

  it("answers count_tokens, model lists, HEAD, health and tool-less requests without consuming the script", async () => {
    server = await startModelServer({ protocol: "anthropic", script: script([{ text: "the one step" }]) });
    const count = await post("/v1/messages/count_tokens", anthropicBody());
    expect(count.status).toBe(200);
    expect(JSON.parse(count.text).input_tokens).toBeGreaterThan(0);
    const title = await post("/v1/messages", { ...anthropicBody({ stream: false }), tools: undefined });
    expect(JSON.parse(title.text)).toMatchObject({ type: "message", content: [{ type: "text" }] });
    expect((await fetch(`${server.url}/v1/models`)).status).toBe(200);
    expect((await fetch(`${server.url}/`, { method: "HEAD" })).status).toBe(200);
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    expect(server.position).toBe(0);
    const step = await post("/v1/messages", anthropicBody({ stream: false }));
    expect(JSON.parse(step.text)).toMatchObject({
      content: [{ type: "text", text: "the one step" }],
      stop_reason: "end_turn",
    });
    expect(server.position).toBe(1);
    expect(server.requests.map((r) => r.kind)).toEqual(["side", "side", "side", "side", "side", "step"]);
  });

  it("a step after the last response is an HTTP 400 naming script_exhausted, logged to the requests file", async () => {
    const dir = mkdtempSync(join(tmpdir(), "lg-ms-"));
    dirs.push(dir);
    const file = join(dir, "requests.jsonl");
    server = await startModelServer({
      protocol: "anthropic",
      script: script([{ text: "only" }]),
      requestsFile: file,
    });
    expect((await post("/v1/messages", anthropicBody())).status).toBe(200);
    const over = await post("/v1/messages", anthropicBody(), { authorization: "Bearer sk-secret-value" });
    expect(over.status).toBe(400);
    expect(JSON.parse(over.text)).toMatchObject({
      type: "error",
      error: { message: expect.stringMatching(/script_exhausted/) },
    });
    expect(server.exhausted).toMatch(/asked for response 2 but the script has 1/);
    const lines = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.kind)).toEqual(["step", "exhausted"]);
    expect(readFileSync(file, "utf8")).not.toContain("sk-secret-value");
  });

  it("an unknown endpoint is a 404, not a step", async () => {
    server = await startModelServer({ protocol: "anthropic", script: script([{ text: "x" }]) });
    expect((await post("/v1/complete", {})).status).toBe(404);
    expect(server.position).toBe(0);
  });
});

describe("model-server --protocol openai-responses", () => {
  const body = (extra: Record<string, unknown> = {}) => ({
    model: "m",
    input: [{ type: "message", role: "user", content: "hi" }],
    tools: [
      { type: "function", name: "exec_command", parameters: {} },
      { type: "custom", name: "apply_patch" },
    ],
    ...extra,
  });

  it("streams output items and a response.completed carrying the whole output and usage", async () => {
    server = await startModelServer({
      protocol: "openai-responses",
      script: script([
        {
          text: "ok",
          tool_calls: [
            { name: "exec_command", args: { cmd: "ls" } },
            { name: "apply_patch", args: "*** Begin Patch\n*** End Patch\n" },
          ],
          usage: { input_tokens: 7, output_tokens: 3 },
        },
      ]),
    });
    const r = await post("/responses", body({ stream: true }));
    const events = sse(r.text).map((e) => ({ name: e.event, data: JSON.parse(e.data) }));
    for (const e of events) expect(e.data.type).toBe(e.name);
    expect(events.map((e) => e.data.sequence_number)).toEqual(events.map((_, i) => i));
    expect(events[0]?.name).toBe("response.created");
    const completed = events.at(-1)?.data;
    expect(completed.type).toBe("response.completed");
    expect(completed.response.usage).toMatchObject({ input_tokens: 7, output_tokens: 3, total_tokens: 10 });
    const output = completed.response.output;
    expect(output[0]).toMatchObject({ type: "message", content: [{ type: "output_text", text: "ok" }] });
    expect(output[1]).toMatchObject({ type: "function_call", name: "exec_command", call_id: "call_1_0" });
    expect(JSON.parse(output[1].arguments)).toEqual({ cmd: "ls" });
    expect(output[2]).toMatchObject({
      type: "custom_tool_call",
      name: "apply_patch",
      input: "*** Begin Patch\n*** End Patch\n",
    });
    const done = events.filter((e) => e.name === "response.output_item.done").map((e) => e.data.item);
    expect(done).toEqual(output);
  });

  it("runs out loudly, with an OpenAI-shaped error", async () => {
    server = await startModelServer({ protocol: "openai-responses", script: [] });
    const r = await post("/v1/responses", body());
    expect(r.status).toBe(400);
    expect(JSON.parse(r.text).error.message).toMatch(/script_exhausted/);
  });
});

describe("model-server --protocol openai-chat", () => {
  it("streams chat.completion.chunks with tool_calls, a usage chunk when asked, and [DONE]", async () => {
    server = await startModelServer({
      protocol: "openai-chat",
      script: script([
        {
          tool_calls: [{ name: "bash", args: { command: "ls" } }],
          usage: { input_tokens: 5, output_tokens: 2 },
        },
      ]),
    });
    const r = await post("/v1/chat/completions", {
      model: "m",
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: "hi" }],
      tools: [{ type: "function", function: { name: "bash", parameters: {} } }],
    });
    const events = sse(r.text);
    expect(events.at(-1)?.data).toBe("[DONE]");
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data));
    const calls = chunks.flatMap((c) =>
      c.choices.flatMap((ch: { delta: { tool_calls?: unknown[] } }) => ch.delta.tool_calls ?? []),
    );
    expect(calls).toEqual([
      {
        index: 0,
        id: "call_1_0",
        type: "function",
        function: { name: "bash", arguments: '{"command":"ls"}' },
      },
    ]);
    expect(
      chunks.flatMap((c) => c.choices.map((ch: { finish_reason: string | null }) => ch.finish_reason)),
    ).toContain("tool_calls");
    expect(chunks.at(-1)?.usage).toEqual({ prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 });
  });
});
