import { aiSdk } from "./ai-sdk.js";
import type { ModelFailure } from "./model.js";

const NETWORK_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EPIPE",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_SOCKET",
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
]);

/** Error names of the SDK that mean the provider answered with something it could not parse. */
const MALFORMED_NAMES = new Set([
  "AI_InvalidResponseDataError",
  "AI_JSONParseError",
  "AI_TypeValidationError",
  "AI_NoContentGeneratedError",
  "AI_EmptyResponseBodyError",
]);

/**
 * Maps anything a provider call threw to a ModelFailure. Total: it never throws, whatever it is
 * given (a string, null, an object whose getters throw), because the model boundary never throws.
 */
export function toModelFailure(thrown: unknown, signal?: AbortSignal): ModelFailure {
  try {
    return classify(unwrapRetry(thrown), signal);
  } catch {
    return {
      kind: "provider",
      retryable: false,
      message: "model request failed with an undescribable error",
    };
  }
}

function classify(error: unknown, signal: AbortSignal | undefined): ModelFailure {
  const message = describe(error);
  const name = error instanceof Error ? error.name : "";
  if (signal?.aborted) {
    // A deadline (AbortSignal.timeout) may be retried; a cancellation (Ctrl-C, shutdown) may not.
    const deadline = (signal.reason as { name?: unknown } | undefined)?.name === "TimeoutError";
    return {
      kind: "timeout",
      retryable: deadline,
      message: `model request aborted: ${describe(signal.reason)}`,
    };
  }
  if (name === "AbortError" || name === "TimeoutError")
    return { kind: "timeout", retryable: true, message: `model request timed out: ${message}` };
  if (aiSdk().APICallError.isInstance(error)) {
    const status = error.statusCode;
    const where = status === undefined ? "" : ` (HTTP ${status})`;
    if (status === 429) {
      const retryAfterMs = retryAfter(error.responseHeaders);
      return {
        kind: "rate_limit",
        retryable: true,
        message: `rate limited${where}: ${message}`,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      };
    }
    if (status === 401 || status === 403)
      return {
        kind: "auth",
        retryable: false,
        message: `not authorized${where}: check the API key: ${message}`,
      };
    if (status === 408)
      return { kind: "timeout", retryable: true, message: `provider timed out${where}: ${message}` };
    if ((status !== undefined && status >= 500) || /overloaded/i.test(message))
      return { kind: "provider", retryable: true, message: `provider error${where}: ${message}` };
    if (status === undefined)
      return { kind: "network", retryable: true, message: `cannot reach the provider: ${message}` };
    return {
      kind: "provider",
      retryable: error.isRetryable,
      message: `provider rejected the request${where}: ${message}`,
    };
  }
  if (name === "AI_LoadAPIKeyError") return { kind: "auth", retryable: false, message };
  if (isNetworkError(error))
    return { kind: "network", retryable: true, message: `cannot reach the provider: ${message}` };
  if (MALFORMED_NAMES.has(name))
    return {
      kind: "malformed",
      retryable: true,
      message: `the provider's response could not be read: ${message}`,
    };
  if (/overloaded/i.test(message)) return { kind: "provider", retryable: true, message };
  return {
    kind: "provider",
    retryable: false,
    message: `model request failed: ${name ? `${name}: ` : ""}${message}`,
  };
}

function unwrapRetry(error: unknown): unknown {
  return aiSdk().RetryError.isInstance(error) ? error.lastError : error;
}

/** Milliseconds from `retry-after-ms` or `retry-after` (seconds or an HTTP date), if present and sane. */
function retryAfter(headers: Record<string, string> | undefined): number | undefined {
  if (!headers) return undefined;
  const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
  const ms = Number.parseFloat(lower["retry-after-ms"] ?? "");
  if (Number.isFinite(ms) && ms >= 0) return Math.round(ms);
  const raw = lower["retry-after"];
  if (raw === undefined) return undefined;
  const seconds = Number(raw.trim());
  if (raw.trim() !== "" && Number.isFinite(seconds) && seconds >= 0) return Math.round(seconds * 1000);
  const date = Date.parse(raw);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

function isNetworkError(error: unknown): boolean {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (current instanceof Error && !seen.has(current)) {
    seen.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string" && NETWORK_CODES.has(code)) return true;
    if (current instanceof TypeError && /fetch failed|failed to fetch/i.test(current.message)) return true;
    current = current.cause;
  }
  return false;
}

/** A one-line description of any thrown value, bounded; never throws. */
export function describe(value: unknown): string {
  try {
    const text =
      value instanceof Error
        ? value.message || value.name
        : typeof value === "string"
          ? value
          : JSON.stringify(value);
    return (text ?? String(value)).slice(0, 2000);
  } catch {
    try {
      return Object.prototype.toString.call(value);
    } catch {
      return "(undescribable value)";
    }
  }
}
