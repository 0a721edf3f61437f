import type { EventData } from "../../core/events/loopgate-event.js";
import { boundText } from "../../core/kernel/bounded.js";

/** What Claude Code's `--output-format stream-json` said about its session: its id and its result line. */
export interface SessionReport {
  sessionId: string | null;
  result: Record<string, unknown> | null;
}

const num = (v: unknown) => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : null);
const int = (v: unknown) => {
  const n = num(v);
  return n === null ? null : Math.round(n);
};

/**
 * A tool call as Claude Code's own stream printed it: the `tool_use` block of an `assistant` line (id,
 * tool, input) and, once printed, the `tool_result` block of the `user` line answering it.
 */
export interface StreamToolCall {
  id: string;
  name: string;
  input: Record<string, unknown>;
  /** `is_error` of the tool_result, and the head of its text (`Exit code N` for a failed Bash call). */
  result: { isError: boolean; text: string } | null;
}

/** The calls by tool_use id. A reader can share one map with the readers of later processes. */
export type StreamToolCalls = Map<string, StreamToolCall>;

const record = (v: unknown): Record<string, unknown> | null =>
  v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null;

/** The text of a tool_result's content (a string, or text blocks), its head only. */
function resultText(content: unknown): string {
  if (typeof content === "string") return content.slice(0, 200);
  if (!Array.isArray(content)) return "";
  const first = content.map(record).find((b) => b?.type === "text");
  return typeof first?.text === "string" ? first.text.slice(0, 200) : "";
}

/**
 * Splits streamed output into JSON lines, keeping the session id, the last `result` line, and the tool
 * calls (`calls`: tool_use blocks of assistant lines, answered by tool_result blocks of user lines).
 */
export class StreamJsonReader {
  private buffer = "";
  readonly report: SessionReport = { sessionId: null, result: null };

  constructor(readonly calls: StreamToolCalls = new Map()) {}

  push(chunk: string): void {
    this.buffer += chunk;
    let i = this.buffer.indexOf("\n");
    while (i >= 0) {
      this.line(this.buffer.slice(0, i));
      this.buffer = this.buffer.slice(i + 1);
      i = this.buffer.indexOf("\n");
    }
    // A line longer than this is not one loopgate reads (a huge tool result): drop it.
    if (this.buffer.length > 4_000_000) this.buffer = "";
  }

  end(): void {
    if (this.buffer) this.line(this.buffer);
    this.buffer = "";
  }

  private line(text: string): void {
    const t = text.trim();
    if (!t.startsWith("{")) return;
    let o: Record<string, unknown>;
    try {
      o = JSON.parse(t) as Record<string, unknown>;
    } catch {
      return;
    }
    if (typeof o.session_id === "string" && !this.report.sessionId) this.report.sessionId = o.session_id;
    if (o.type === "result") this.report.result = o;
    if (o.type === "assistant" || o.type === "user") this.toolBlocks(o.type, record(o.message)?.content);
  }

  private toolBlocks(type: "assistant" | "user", content: unknown): void {
    if (!Array.isArray(content)) return;
    for (const b of content.map(record)) {
      if (!b) continue;
      if (
        type === "assistant" &&
        b.type === "tool_use" &&
        typeof b.id === "string" &&
        typeof b.name === "string"
      ) {
        // The first block with an id is the call; a later line cannot rewrite it.
        if (!this.calls.has(b.id))
          this.calls.set(b.id, { id: b.id, name: b.name, input: record(b.input) ?? {}, result: null });
      } else if (type === "user" && b.type === "tool_result" && typeof b.tool_use_id === "string") {
        const call = this.calls.get(b.tool_use_id);
        if (call && call.result === null)
          call.result = { isError: b.is_error === true, text: resultText(b.content) };
      }
    }
  }
}

/** The audit fact of one finished Claude Code process, from its result line (all null when it printed none). */
export function sessionFact(
  report: SessionReport,
  attempt: number,
  exitCode: number | null,
): EventData<"agent_session_finished"> {
  const r = report.result ?? {};
  const usage = (r.usage && typeof r.usage === "object" ? r.usage : {}) as Record<string, unknown>;
  const input =
    int(usage.input_tokens) === null
      ? null
      : (int(usage.input_tokens) ?? 0) +
        (int(usage.cache_read_input_tokens) ?? 0) +
        (int(usage.cache_creation_input_tokens) ?? 0);
  return {
    attempt,
    agent: "claude-code",
    session_id: String(r.session_id ?? report.sessionId ?? "").slice(0, 200),
    exit_code: exitCode,
    subtype: typeof r.subtype === "string" ? r.subtype.slice(0, 200) : null,
    is_error: typeof r.is_error === "boolean" ? r.is_error : null,
    num_turns: int(r.num_turns),
    total_cost_usd: num(r.total_cost_usd),
    input_tokens: input,
    output_tokens: int(usage.output_tokens),
    result_excerpt: boundText(typeof r.result === "string" ? r.result : "", 4000),
  };
}
