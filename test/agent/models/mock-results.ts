import type { MockLanguageModelV3 } from "ai/test";

type LanguageModelV3GenerateResult = Awaited<ReturnType<MockLanguageModelV3["doGenerate"]>>;
type LanguageModelV3Content = LanguageModelV3GenerateResult["content"][number];
type Finish = LanguageModelV3GenerateResult["finishReason"]["unified"];

/** A provider-level result as a LanguageModelV3 returns it, for MockLanguageModelV3. */
export function mockResult(
  content: LanguageModelV3Content[],
  options: { finish?: Finish; raw?: string; input?: number; output?: number } = {},
): LanguageModelV3GenerateResult {
  return {
    content,
    finishReason: { unified: options.finish ?? "stop", raw: options.raw },
    usage: {
      inputTokens: { total: options.input, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: options.output, text: undefined, reasoning: undefined },
    },
    warnings: [],
  };
}

/** A tool call as the provider sends it: the input is the model's raw JSON text. */
export function toolCallPart(id: string, name: string, input: string): LanguageModelV3Content {
  return { type: "tool-call", toolCallId: id, toolName: name, input };
}
