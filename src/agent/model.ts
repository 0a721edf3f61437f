import type { z } from "zod";
import type { ModelFailureKind } from "../core/event-parts.js";

/** One tool call the model asked for. `args` is unvalidated: tools validate centrally before executing. */
export interface ToolCall {
  id: string;
  name: string;
  args: unknown;
}

/** Tokens and cost of one model request; cost is null when the price is unknown. */
export interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
  costUsd: number | null;
}

/**
 * The conversation as loopgate keeps it (rebuilt from events on resume). `origin` says who wrote a
 * user message: the operator's task prompt, loopgate's continuation prompt, or a runtime notice.
 */
export type ModelMessage =
  | { role: "user"; content: string; origin: "operator" | "continuation" | "runtime" }
  | { role: "assistant"; text: string; toolCalls: ToolCall[] }
  | { role: "tool"; callId: string; name: string; content: string; isError: boolean };

/** A tool as the model sees it. */
export interface ToolSpec {
  name: string;
  description: string;
  inputSchema: z.ZodType;
}

/** One model request: loopgate owns the loop, so every request is a single step. */
export interface ModelRequest {
  system: string;
  messages: readonly ModelMessage[];
  tools: readonly ToolSpec[];
  signal?: AbortSignal;
}

/** Why a model request failed. `retryable` errors may be retried by the loop, within its budget. */
export interface ModelFailure {
  kind: ModelFailureKind;
  message: string;
  retryable: boolean;
  retryAfterMs?: number;
}

/** The outcome of a model request, as a value: the model boundary never throws. */
export type ModelResponse =
  | { ok: true; text: string; toolCalls: ToolCall[]; usage: ModelUsage; finishReason: string }
  | { ok: false; error: ModelFailure };

/** A model: a provider through the AI SDK, a scripted file, or a replayed recording. */
export interface ModelAdapter {
  /** e.g. "anthropic:claude-sonnet-4-5", "scripted:fix.yaml". */
  readonly id: string;
  generate(request: ModelRequest): Promise<ModelResponse>;
}
