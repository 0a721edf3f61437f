import type { z } from "zod";
import type { AgentMessage, ToolCall } from "./agent-messages.js";

/**
 * The model boundary's types (no I/O): what a model adapter is asked and answers. Below every layer
 * that calls a model (the agent, the judge), so none of them imports another for them.
 */

export type { ToolCall } from "./agent-messages.js";
/** The conversation as loopgate keeps it (rebuilt from events on resume): see core/agent/agent-messages.ts. */
export type ModelMessage = AgentMessage;

/** Tokens and cost of one model request; cost is null when the price is unknown. */
export interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
  costUsd: number | null;
}

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
  kind:
    | "rate_limit"
    | "provider"
    | "refusal"
    | "malformed"
    | "network"
    | "timeout"
    | "auth"
    | "script_exhausted";
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
