import { createRequire } from "node:module";

type Ai = typeof import("ai");
type Anthropic = typeof import("@ai-sdk/anthropic");
type OpenAI = typeof import("@ai-sdk/openai");
type OpenAICompatible = typeof import("@ai-sdk/openai-compatible");

const load = createRequire(import.meta.url);

let ai: Ai | undefined;

/**
 * The AI SDK (`ai`), loaded the first time a provider model is made or its error is read. Every goal
 * command that can plan a turn, and every worker, would otherwise load it with its own copy of zod at
 * start (about 130 ms of CPU), though most turns run with scripted models or no model at all.
 */
export function aiSdk(): Ai {
  ai ??= load("ai") as Ai;
  return ai;
}

/** The provider packages, each loaded when a model of that provider is first made. */
export const providers = {
  anthropic: (): Anthropic => load("@ai-sdk/anthropic") as Anthropic,
  openai: (): OpenAI => load("@ai-sdk/openai") as OpenAI,
  openaiCompatible: (): OpenAICompatible => load("@ai-sdk/openai-compatible") as OpenAICompatible,
};
