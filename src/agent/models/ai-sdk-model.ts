import type { LanguageModel, ModelMessage as SdkMessage, ToolSet } from "ai";
import { aiSdk } from "./ai-sdk.js";
import type { ModelAdapter, ModelMessage, ModelResponse, ToolCall, ToolSpec } from "./model.js";
import { describe, toModelFailure } from "./model-failure.js";
import { approximatePrice, costOf, type Pricing } from "./pricing.js";

/**
 * A model behind the AI SDK as a ModelAdapter: one `generateText` call per request, a single
 * step, no SDK retries (the loop owns retries and records them), and tools without `execute`,
 * so the SDK hands every tool call back to loopgate. Never throws: failures come back as values.
 *
 * `pricing` overrides the approximate built-in price table; `null` means "the price is unknown"
 * (a local server), and the cost is reported as null.
 */
export function aiSdkModel(id: string, model: LanguageModel, pricing?: Pricing | null): ModelAdapter {
  const price = pricing !== undefined ? pricing : approximatePrice(modelName(id, model));
  return {
    id,
    async generate(request): Promise<ModelResponse> {
      try {
        const tools = toSdkTools(request.tools);
        const { generateText, stepCountIs } = aiSdk();
        const result = await generateText({
          model,
          system: request.system,
          messages: toSdkMessages(request.messages),
          ...(tools ? { tools } : {}),
          maxRetries: 0,
          stopWhen: stepCountIs(1),
          ...(request.signal ? { abortSignal: request.signal } : {}),
        });
        const finishReason = result.finishReason;
        if (finishReason === "content-filter") {
          const said = result.text ? `; it said: ${result.text.slice(0, 500)}` : "";
          const raw = result.rawFinishReason ? ` (${result.rawFinishReason})` : "";
          return {
            ok: false,
            error: {
              kind: "refusal",
              retryable: false,
              message: `the model refused or was filtered${raw}${said}`,
            },
          };
        }
        if (finishReason === "error" && result.toolCalls.length === 0 && result.text === "")
          return {
            ok: false,
            error: {
              kind: "provider",
              retryable: true,
              message: "the provider ended the response with an error",
            },
          };
        // Invalid calls (unparsable JSON, an unknown tool) come back from the SDK as dynamic calls
        // marked `invalid`, with the raw input: they pass through, and loopgate's central
        // validation reports the problem to the model as an error tool result.
        const toolCalls: ToolCall[] = result.toolCalls
          .filter((call) => !call.providerExecuted)
          .map((call) => ({ id: call.toolCallId, name: call.toolName, args: call.input }));
        const inputTokens = result.usage.inputTokens ?? 0;
        const outputTokens = result.usage.outputTokens ?? 0;
        return {
          ok: true,
          text: result.text,
          toolCalls,
          usage: { inputTokens, outputTokens, costUsd: costOf(price, inputTokens, outputTokens) },
          finishReason,
        };
      } catch (error) {
        return { ok: false, error: toModelFailure(error, request.signal) };
      }
    },
  };
}

/** loopgate's conversation as AI SDK messages. Exported for tests and for adapters that wrap it. */
export function toSdkMessages(messages: readonly ModelMessage[]): SdkMessage[] {
  const out: SdkMessage[] = [];
  for (const message of messages) {
    switch (message.role) {
      case "user":
        out.push({ role: "user", content: message.content });
        break;
      case "assistant": {
        const content = [
          ...(message.text ? [{ type: "text" as const, text: message.text }] : []),
          ...message.toolCalls.map((call) => ({
            type: "tool-call" as const,
            toolCallId: call.id,
            toolName: call.name,
            // Providers require an object; an invalid call's raw input (a string that was not
            // JSON) is sent back as {} like the SDK does, and its error result explains why.
            input: isPlainObject(call.args) ? call.args : {},
          })),
        ];
        // An assistant turn that said nothing and called nothing carries no information, and
        // providers reject empty messages.
        if (content.length > 0) out.push({ role: "assistant", content });
        break;
      }
      case "tool":
        out.push({
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: message.callId,
              toolName: message.name,
              output: { type: message.isError ? "error-text" : "text", value: message.content },
            },
          ],
        });
        break;
      default: {
        const unknown: never = message;
        throw new Error(`unknown message role in ${describe(unknown)}`);
      }
    }
  }
  return out;
}

/**
 * loopgate's tools as SDK tools, with no `execute` and no SDK-side validation: the JSON schema
 * goes to the model, and arguments come back as the model wrote them (loopgate validates them
 * centrally, once, against the same zod schema).
 */
export function toSdkTools(specs: readonly ToolSpec[]): ToolSet | undefined {
  if (specs.length === 0) return undefined;
  const { jsonSchema, tool, zodSchema } = aiSdk();
  const tools: ToolSet = {};
  for (const spec of specs) {
    const schema = zodSchema(spec.inputSchema);
    tools[spec.name] = tool({
      description: spec.description,
      inputSchema: jsonSchema(() => schema.jsonSchema),
    });
  }
  return tools;
}

function modelName(id: string, model: LanguageModel): string {
  return typeof model === "string" ? model : (model.modelId ?? id);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
