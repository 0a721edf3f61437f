import {
  estimateTokens,
  type Reply,
  type Route,
  record,
  type SseEvent,
  type StepContext,
  type WireProtocol,
} from "./wire.js";

/**
 * Anthropic Messages API (`POST /v1/messages`, what Claude Code speaks). A request that offers
 * tools is an agent step; one without tools (a title, a summary, a quota probe) is a side request
 * answered with a short fixed text, consuming nothing. `count_tokens` and the model list are
 * answered locally. Streaming follows the documented event flow: `message_start`, per content
 * block `content_block_start` / `content_block_delta` / `content_block_stop`, `message_delta`
 * (stop_reason, output usage), `message_stop`.
 */
export const anthropicProtocol: WireProtocol = {
  name: "anthropic",
  route(method, path, body): Route {
    if (method === "POST" && path === "/v1/messages") {
      if (this.offeredTools(body).length > 0) return { kind: "step" };
      return {
        kind: "side",
        what: "messages request without tools (title, summary or probe)",
        reply: sideMessage(record(body)),
      };
    }
    if (method === "POST" && path === "/v1/messages/count_tokens")
      return {
        kind: "side",
        what: "count_tokens",
        reply: { status: 200, json: { input_tokens: estimateTokens(body) } },
      };
    if (method === "GET" && (path === "/v1/models" || path.startsWith("/v1/models/")))
      return { kind: "side", what: "model list", reply: { status: 200, json: modelList(path) } };
    return { kind: "not_found" };
  },
  offeredTools(body) {
    const tools = record(body).tools;
    if (!Array.isArray(tools)) return [];
    return tools.map((t) => record(t).name).filter((n): n is string => typeof n === "string");
  },
  renderStep(context) {
    const content: Record<string, unknown>[] = [];
    if (context.text !== "" || context.toolCalls.length === 0)
      content.push({ type: "text", text: context.text });
    for (const call of context.toolCalls)
      content.push({ type: "tool_use", id: call.id, name: call.name, input: call.args ?? {} });
    const stopReason = context.toolCalls.length > 0 ? "tool_use" : "end_turn";
    const id = `msg_loopgate_${context.step}`;
    if (!context.stream)
      return {
        status: 200,
        json: {
          id,
          type: "message",
          role: "assistant",
          model: context.model,
          content,
          stop_reason: stopReason,
          stop_sequence: null,
          usage: context.usage,
        },
      };
    return { status: 200, sse: streamOf(id, context, content, stopReason) };
  },
  renderError(status, message) {
    return {
      status,
      json: { type: "error", error: { type: "invalid_request_error", message } },
    };
  },
};

const SIDE_TEXT = "loopgate model-server";

/** The fixed answer to a request without tools: a short text, streamed when asked. */
function sideMessage(body: Record<string, unknown>): Reply {
  return anthropicProtocol.renderStep({
    step: 0,
    model: typeof body.model === "string" ? body.model : "scripted",
    text: SIDE_TEXT,
    toolCalls: [],
    usage: { input_tokens: estimateTokens(body), output_tokens: 1 },
    stream: body.stream === true,
    body,
  });
}

function streamOf(
  id: string,
  context: StepContext,
  content: readonly Record<string, unknown>[],
  stopReason: string,
): SseEvent[] {
  const events: SseEvent[] = [
    {
      event: "message_start",
      data: {
        type: "message_start",
        message: {
          id,
          type: "message",
          role: "assistant",
          model: context.model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: {
            input_tokens: context.usage.input_tokens,
            output_tokens: 1,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 0,
          },
        },
      },
    },
    { event: "ping", data: { type: "ping" } },
  ];
  content.forEach((block, index) => {
    const start =
      block.type === "text" ? { type: "text", text: "" } : { ...block, input: {} as Record<string, never> };
    const delta =
      block.type === "text"
        ? { type: "text_delta", text: block.text }
        : { type: "input_json_delta", partial_json: JSON.stringify(block.input ?? {}) };
    events.push(
      { event: "content_block_start", data: { type: "content_block_start", index, content_block: start } },
      { event: "content_block_delta", data: { type: "content_block_delta", index, delta } },
      { event: "content_block_stop", data: { type: "content_block_stop", index } },
    );
  });
  events.push(
    {
      event: "message_delta",
      data: {
        type: "message_delta",
        delta: { stop_reason: stopReason, stop_sequence: null },
        usage: { output_tokens: context.usage.output_tokens },
      },
    },
    { event: "message_stop", data: { type: "message_stop" } },
  );
  return events;
}

function modelList(path: string): unknown {
  const model = (id: string) => ({
    type: "model",
    id,
    display_name: `${id} (loopgate scripted)`,
    created_at: "2025-01-01T00:00:00Z",
  });
  if (path.startsWith("/v1/models/")) return model(decodeURIComponent(path.slice("/v1/models/".length)));
  return { data: [model("scripted")], has_more: false, first_id: "scripted", last_id: "scripted" };
}
