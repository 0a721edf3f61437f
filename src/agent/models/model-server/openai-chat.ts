import { estimateTokens, type Reply, type Route, record, type WireProtocol } from "./wire.js";

/**
 * OpenAI Chat Completions (`POST /v1/chat/completions` or `/chat/completions`). A request that
 * offers tools is an agent step; one without is a side request answered with a short fixed text.
 * Streaming sends `chat.completion.chunk`s (role, content, one `tool_calls` delta per call, the
 * finish reason, a usage chunk when `stream_options.include_usage`) and `data: [DONE]`.
 */
export const openaiChatProtocol: WireProtocol = {
  name: "openai-chat",
  route(method, path, body): Route {
    const p = path.replace(/^\/v1(?=\/)/, "");
    if (method === "POST" && p === "/chat/completions") {
      if (this.offeredTools(body).length > 0) return { kind: "step" };
      return {
        kind: "side",
        what: "chat request without tools (title, summary or probe)",
        reply: this.renderStep({
          step: 0,
          model: typeof record(body).model === "string" ? (record(body).model as string) : "scripted",
          text: "loopgate model-server",
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
          },
        },
      };
    return { kind: "not_found" };
  },
  offeredTools(body) {
    const tools = record(body).tools;
    if (!Array.isArray(tools)) return [];
    return tools
      .map((t) => record(record(t).function).name)
      .filter((n): n is string => typeof n === "string");
  },
  renderStep(context): Reply {
    const id = `chatcmpl_loopgate_${context.step}`;
    const toolCalls = context.toolCalls.map((call, index) => ({
      index,
      id: call.id,
      type: "function",
      function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) },
    }));
    const finish = toolCalls.length > 0 ? "tool_calls" : "stop";
    const usage = {
      prompt_tokens: context.usage.input_tokens,
      completion_tokens: context.usage.output_tokens,
      total_tokens: context.usage.input_tokens + context.usage.output_tokens,
    };
    const base = { id, created: CREATED, model: context.model };
    if (!context.stream)
      return {
        status: 200,
        json: {
          ...base,
          object: "chat.completion",
          choices: [
            {
              index: 0,
              message: {
                role: "assistant",
                content: context.text === "" && toolCalls.length > 0 ? null : context.text,
                ...(toolCalls.length > 0 ? { tool_calls: toolCalls.map(({ index: _i, ...c }) => c) } : {}),
              },
              finish_reason: finish,
            },
          ],
          usage,
        },
      };
    const chunk = (delta: unknown, finish_reason: string | null = null) => ({
      ...base,
      object: "chat.completion.chunk",
      choices: [{ index: 0, delta, finish_reason }],
    });
    const events: unknown[] = [chunk({ role: "assistant", content: "" })];
    if (context.text !== "") events.push(chunk({ content: context.text }));
    for (const call of toolCalls) events.push(chunk({ tool_calls: [call] }));
    events.push(chunk({}, finish));
    const streamOptions = record(record(context.body).stream_options);
    if (streamOptions.include_usage === true)
      events.push({ ...base, object: "chat.completion.chunk", choices: [], usage });
    return { status: 200, sse: [...events.map((data) => ({ data })), { data: "[DONE]" }] };
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

const CREATED = 1_700_000_000;
