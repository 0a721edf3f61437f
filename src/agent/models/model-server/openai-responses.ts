import { estimateTokens, type Reply, type Route, record, type SseEvent, type WireProtocol } from "./wire.js";

/**
 * OpenAI Responses API (`POST /v1/responses` or `/responses`, what Codex speaks to a provider with
 * `wire_api = "responses"`). A request that offers tools is an agent step; one without tools is a
 * side request answered with a short fixed text. A scripted call to a tool the request declares
 * as `type: "custom"` (Codex's freeform `apply_patch`) becomes a `custom_tool_call` whose `input`
 * is the string `args` (or `args.input`); any other call becomes a `function_call` with JSON
 * `arguments`. Streaming emits `response.created`, `response.in_progress`, per output item
 * `response.output_item.added` / deltas / `response.output_item.done`, then `response.completed`
 * carrying the whole response and its usage.
 */
export const openaiResponsesProtocol: WireProtocol = {
  name: "openai-responses",
  route(method, path, body): Route {
    const p = path.replace(/^\/v1(?=\/)/, "");
    if (method === "POST" && p === "/responses") {
      if (this.offeredTools(body).length > 0) return { kind: "step" };
      return {
        kind: "side",
        what: "responses request without tools (title, summary or probe)",
        reply: this.renderStep({
          step: 0,
          model: modelOf(body),
          text: SIDE_TEXT,
          toolCalls: [],
          usage: { input_tokens: estimateTokens(body), output_tokens: 1 },
          stream: record(body).stream === true,
          body,
        }),
      };
    }
    if (method === "GET" && p === "/models")
      return {
        kind: "side",
        what: "model list",
        reply: {
          status: 200,
          json: {
            object: "list",
            data: [{ id: "scripted", object: "model", created: CREATED, owned_by: "loopgate" }],
            models: [],
          },
        },
      };
    return { kind: "not_found" };
  },
  offeredTools(body) {
    const tools = record(body).tools;
    if (!Array.isArray(tools)) return [];
    return tools
      .map((t) => {
        const tool = record(t);
        return typeof tool.name === "string" ? tool.name : tool.type;
      })
      .filter((n): n is string => typeof n === "string");
  },
  renderStep(context): Reply {
    const id = `resp_loopgate_${context.step}`;
    const output: Record<string, unknown>[] = [];
    if (context.text !== "" || context.toolCalls.length === 0)
      output.push({
        id: `msg_loopgate_${context.step}`,
        type: "message",
        status: "completed",
        role: "assistant",
        content: [{ type: "output_text", text: context.text, annotations: [] }],
      });
    const custom = customTools(context.body);
    context.toolCalls.forEach((call, index) => {
      const itemId = `fc_loopgate_${context.step}_${index}`;
      if (custom.has(call.name))
        output.push({
          id: itemId,
          type: "custom_tool_call",
          status: "completed",
          call_id: call.id,
          name: call.name,
          input: inputOf(call.args),
        });
      else
        output.push({
          id: itemId,
          type: "function_call",
          status: "completed",
          call_id: call.id,
          name: call.name,
          arguments: JSON.stringify(call.args ?? {}),
        });
    });
    const usage = {
      input_tokens: context.usage.input_tokens,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: context.usage.output_tokens,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: context.usage.input_tokens + context.usage.output_tokens,
    };
    const response = (status: string, out: unknown[], u: unknown) => ({
      id,
      object: "response",
      created_at: CREATED,
      status,
      model: context.model,
      output: out,
      usage: u,
      error: null,
      incomplete_details: null,
    });
    if (!context.stream) return { status: 200, json: response("completed", output, usage) };
    const events: Record<string, unknown>[] = [
      { type: "response.created", response: response("in_progress", [], null) },
      { type: "response.in_progress", response: response("in_progress", [], null) },
    ];
    output.forEach((item, output_index) => {
      events.push({ type: "response.output_item.added", output_index, item: started(item) });
      if (item.type === "message") {
        const text = context.text;
        const part = { type: "output_text", text: "", annotations: [] };
        const ids = { item_id: item.id, output_index, content_index: 0 };
        events.push(
          { type: "response.content_part.added", ...ids, part },
          { type: "response.output_text.delta", ...ids, delta: text },
          { type: "response.output_text.done", ...ids, text },
          { type: "response.content_part.done", ...ids, part: { ...part, text } },
        );
      } else if (item.type === "function_call") {
        const ids = { item_id: item.id, output_index };
        events.push(
          { type: "response.function_call_arguments.delta", ...ids, delta: item.arguments },
          { type: "response.function_call_arguments.done", ...ids, arguments: item.arguments },
        );
      }
      events.push({ type: "response.output_item.done", output_index, item });
    });
    events.push({ type: "response.completed", response: response("completed", output, usage) });
    const sse: SseEvent[] = events.map((data, sequence_number) => ({
      event: data.type as string,
      data: { ...data, sequence_number },
    }));
    return { status: 200, sse };
  },
  renderError(status, message) {
    return {
      status,
      json: {
        error: {
          type: "invalid_request_error",
          code: status === 404 ? "not_found" : "invalid_request",
          message,
          param: null,
        },
      },
    };
  },
};

const SIDE_TEXT = "loopgate model-server";
const CREATED = 1_700_000_000;

function modelOf(body: unknown): string {
  const model = record(body).model;
  return typeof model === "string" ? model : "scripted";
}

/** An output item as first announced: in progress, its payload still empty. */
function started(item: Record<string, unknown>): Record<string, unknown> {
  if (item.type === "message") return { ...item, status: "in_progress", content: [] };
  if (item.type === "function_call") return { ...item, status: "in_progress", arguments: "" };
  return { ...item, status: "in_progress", input: "" };
}

/** The names of the tools the request declares as `type: "custom"` (freeform input). */
function customTools(body: unknown): Set<string> {
  const tools = record(body).tools;
  const names = new Set<string>();
  if (!Array.isArray(tools)) return names;
  for (const t of tools) {
    const tool = record(t);
    if (tool.type === "custom" && typeof tool.name === "string") names.add(tool.name);
  }
  return names;
}

function inputOf(args: unknown): string {
  if (typeof args === "string") return args;
  const input = record(args).input;
  return typeof input === "string" ? input : JSON.stringify(args ?? {});
}
