import { boundText } from "../../core/bounded.js";
import type { EventData } from "../../core/events.js";

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

/** Splits streamed output into JSON lines, keeping the session id and the last `result` line. */
export class StreamJsonReader {
  private buffer = "";
  readonly report: SessionReport = { sessionId: null, result: null };

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
