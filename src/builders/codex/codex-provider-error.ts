import { boundText } from "../../core/kernel/bounded.js";
import { providerStatus, UNANSWERED_TRIES } from "../claude/claude-provider-error.js";
import { JsonLines } from "../json-lines.js";

/** Codex 0.169.0's word for a request nothing answered: "Reconnecting... waiting for network (Connection failed: …)". */
const NO_ANSWER = /waiting for network|Connection failed|error sending request|connection refused/i;
/** A retry line: "Reconnecting... 2/5 (…)" or the no-answer one. */
const RETRY = /^Reconnecting\.\.\./;
/** A status Codex names in its failure: "unexpected status 401 Unauthorized", "last status: 429 Too Many Requests". */
const STATUS = /(?:unexpected status|last status:?)\s+(\d{3})/i;

const str = (v: unknown): string => (typeof v === "string" ? v : "");

/**
 * Watches `codex exec --json` events (0.169.0) for a provider that is down, as Codex reports it: its
 * top-level `error` events while it retries ("Reconnecting... n/5 (…)", or "Reconnecting... waiting for
 * network (Connection failed: …)" for a request nothing answered, which it repeats without end) and the
 * `turn.failed` it gives up with. A failed turn is the provider's when Codex retried it first (it retries
 * only transport and provider errors) or its message names a provider status (401, 403, 408, 429, 5xx)
 * or a connection failure; UNANSWERED_TRIES unanswered tries in a row end the wait early. Other events
 * of progress reset the count. Returns the failure once it is known (the first one is kept).
 */
export class CodexProviderWatch {
  private unanswered = 0;
  private retried = false;
  failure: string | null = null;
  private lines = new JsonLines();

  /** Reads a chunk of Codex's stdout (whole lines only); returns the failure once it is known. */
  push(chunk: string): string | null {
    this.lines.push(chunk, (o) => this.observe(o));
    return this.failure;
  }

  /** Reads one parsed event; returns the failure once it is known. */
  observe(e: Record<string, unknown>): string | null {
    if (this.failure) return this.failure;
    if (e.type === "error") {
      const message = str(e.message);
      if (RETRY.test(message)) this.retried = true;
      if (NO_ANSWER.test(message)) {
        this.unanswered += 1;
        if (this.unanswered >= UNANSWERED_TRIES)
          this.failure = `no answer on ${this.unanswered} tries in a row (Codex: ${boundText(message, 500)}); it would go on waiting`;
      } else if (RETRY.test(message)) this.unanswered = 0;
      return this.failure;
    }
    if (e.type === "turn.failed") {
      const message = str((e.error as Record<string, unknown> | undefined)?.message) || "turn failed";
      const s = STATUS.exec(message)?.[1];
      if (this.retried || NO_ANSWER.test(message) || (s !== undefined && providerStatus(Number(s))))
        this.failure = boundText(message, 1000);
      return this.failure;
    }
    if (e.type === "turn.completed" || e.type === "item.completed" || e.type === "item.started") {
      this.unanswered = 0;
      if (e.type === "turn.completed") this.retried = false;
    }
    return null;
  }
}

/** Runs the watch over a whole `codex exec --json` output; the provider failure it shows, or null. */
export function codexProviderFailure(jsonl: string): string | null {
  const watch = new CodexProviderWatch();
  return watch.push(jsonl.endsWith("\n") ? jsonl : `${jsonl}\n`);
}
