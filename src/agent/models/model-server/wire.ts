import type { ScriptedResponse } from "../script-file.js";

/** The wire protocols `model-server` speaks. */
export const PROTOCOLS = ["anthropic", "openai-responses", "openai-chat"] as const;
export type Protocol = (typeof PROTOCOLS)[number];

/** What the server sends back for one request: a JSON body, or a list of SSE events. */
export type Reply =
  | { status: number; json: unknown; headers?: Record<string, string> }
  | { status: number; sse: readonly SseEvent[]; headers?: Record<string, string> }
  | { status: number; empty: true; headers?: Record<string, string> };

/** One server-sent event: `event: NAME` (omitted when undefined) and `data: JSON` (or a raw string). */
export interface SseEvent {
  event?: string;
  data: unknown;
}

/** A tool call after the tool-name mapping, ready to be written in a protocol's shape. */
export interface WireToolCall {
  id: string;
  name: string;
  /** The arguments as the client's tool expects them (after any mapping). */
  args: unknown;
}

/** What a protocol's renderer needs to answer one agent step. */
export interface StepContext {
  /** 1-based number of the scripted response being served. */
  step: number;
  /** The `model` the client asked for (echoed back). */
  model: string;
  text: string;
  toolCalls: readonly WireToolCall[];
  usage: { input_tokens: number; output_tokens: number };
  /** Whether the client asked for a stream (`stream: true`). */
  stream: boolean;
  /** The request's JSON body (to look up how an offered tool is declared). */
  body: unknown;
}

/** How one request is treated: an agent step (consumes a scripted response) or a side request. */
export type Route = { kind: "step" } | { kind: "side"; what: string; reply: Reply } | { kind: "not_found" };

/** One protocol: how requests are routed and how a scripted response is written on the wire. */
export interface WireProtocol {
  name: Protocol;
  route(method: string, path: string, body: unknown): Route;
  /** The names of the tools the request offers (`tools[].name`), in order. */
  offeredTools(body: unknown): string[];
  renderStep(context: StepContext): Reply;
  /** An error the client shows to its user (and does not retry). */
  renderError(status: number, message: string): Reply;
}

/** A rough token count (4 characters a token) of a JSON body, for usage fields and count_tokens. */
export function estimateTokens(value: unknown): number {
  const text = typeof value === "string" ? value : JSON.stringify(value ?? "");
  return Math.max(1, Math.ceil(text.length / 4));
}

export function record(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/** The scripted response's usage, or an estimate from the request and the response text. */
export function usageOf(
  response: ScriptedResponse,
  body: unknown,
): { input_tokens: number; output_tokens: number } {
  if (response.usage)
    return { input_tokens: response.usage.input_tokens, output_tokens: response.usage.output_tokens };
  return {
    input_tokens: estimateTokens(body),
    output_tokens: estimateTokens({ t: response.text, c: response.tool_calls }),
  };
}
