import { boundText } from "../../core/kernel/bounded.js";
import { JsonLines } from "../json-lines.js";

/**
 * How many of an agent's model requests in a row may get no HTTP answer at all (a refused port, a
 * reset, a DNS failure) before its provider counts as down. Claude Code retries such a request ten
 * times over about three minutes and Codex waits for the network without end; a provider that answered
 * none of three tries (Claude: about four seconds of its backoff; Codex: about twenty-five) is not
 * fixed by the rest of that wait, while one lost packet is forgiven.
 */
export const UNANSWERED_TRIES = 3;

/** HTTP statuses that are the provider's failure, not the agent's work: auth, rate limit, timeout, server. */
export function providerStatus(status: number): boolean {
  return status === 401 || status === 403 || status === 408 || status === 429 || status >= 500;
}

/** Credentials the provider refused: retrying with the same key cannot help. */
const refusedKey = (status: number | null) => status === 401 || status === 403;

const str = (v: unknown): string => (typeof v === "string" ? v : "");
const status = (v: unknown): number | null => (typeof v === "number" && Number.isInteger(v) ? v : null);

/** The text of an assistant message's text blocks. */
function messageText(o: Record<string, unknown>): string {
  const m = o.message as { content?: unknown } | undefined;
  const blocks = Array.isArray(m?.content) ? (m.content as Record<string, unknown>[]) : [];
  return blocks
    .filter((b) => b && b.type === "text")
    .map((b) => str(b.text))
    .join("\n");
}

/**
 * Watches Claude Code's `--output-format stream-json` lines (2.1.328) for a provider that is down, as
 * Claude itself reports it: its `system`/`api_retry` lines (`error_status`: the HTTP status, null when
 * nothing answered; `error`: its own word for it), its synthetic assistant message
 * (`is_api_error_message`, "API Error: …") and its `result` line (`is_error`, `terminal_reason:
 * "api_error"`, `api_error_status`). The first failure found is kept: refused credentials at once,
 * UNANSWERED_TRIES unanswered tries in a row, or the error Claude gave up with. Any other line of
 * progress (an answer arrived) resets the count. A 400 or 404 is not the provider being down (a bad
 * request, a scripted model out of responses) and is left to the run.
 */
export class ClaudeProviderWatch {
  private unanswered = 0;
  private last = "";
  /** What went wrong with the provider, once known; null while it looks fine. */
  failure: string | null = null;
  private lines = new JsonLines();

  /** Reads a chunk of the agent's output (whole lines only); returns the failure once it is known. */
  push(chunk: string): string | null {
    this.lines.push(chunk, (o) => this.observe(o));
    return this.failure;
  }

  /** Reads one parsed line; returns the failure once it is known. */
  observe(o: Record<string, unknown>): string | null {
    if (this.failure) return this.failure;
    if (o.type === "system" && o.subtype === "api_retry") {
      const s = status(o.error_status);
      const what = str(o.error) || "unknown";
      if (refusedKey(s))
        this.failure = `HTTP ${s} (${what}): the provider refused the credentials; retrying cannot help`;
      else if (s === null) {
        this.unanswered += 1;
        this.last = what;
        if (this.unanswered >= UNANSWERED_TRIES)
          this.failure = `no answer on ${this.unanswered} tries in a row (Claude Code: ${what}); it would go on retrying for minutes`;
      } else this.unanswered = 0;
      return this.failure;
    }
    if (o.type === "assistant" && o.is_api_error_message === true) {
      const s = status(o.api_error_status);
      if (s === null || providerStatus(s))
        this.failure = boundText(messageText(o) || `API error ${str(o.error) || this.last}`, 1000);
      return this.failure;
    }
    if (o.type === "result") {
      const s = status(o.api_error_status);
      const apiError = o.terminal_reason === "api_error" || str(o.api_error) !== "";
      if (o.is_error === true && apiError && (s === null || providerStatus(s)))
        this.failure = boundText(str(o.result) || `API error ${str(o.api_error)}`, 1000);
      return this.failure;
    }
    if (o.type === "assistant" || o.type === "user") this.unanswered = 0;
    return null;
  }
}

/** The run's reason for a provider that failed: which provider (its base URL) and what it did. */
export function providerDown(baseUrl: string, failure: string): string {
  return `the model provider at ${baseUrl} failed: ${failure}`;
}
