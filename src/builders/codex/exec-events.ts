import { z } from "zod";
import type { AgentRuntimeEventBody } from "../../core/run/run-decider.js";

/**
 * What `codex exec --json` printed, turned into facts: one JSON object a line (`thread.started`,
 * `turn.started`, `item.started` / `item.updated` / `item.completed` with an `item` of type
 * `command_execution {command, aggregated_output, exit_code, status}`, `file_change {changes:
 * [{path, kind}], status}`, `agent_message {text}`, `reasoning`, `error`…, `turn.completed
 * {usage}`, `turn.failed {error}`, `error {message}`). These facts are what Codex's runtime
 * reported (origin agent_runtime): good for an audit and step appraisal when
 * it ran in loopgate's sandbox, never for the verdict, which only the gates decide. The final
 * agent message is a claim.
 */
export interface CodexFacts {
  thread_id: string | null;
  commands: { command: string; exit_code: number | null; status: string; output_excerpt: string }[];
  file_changes: { path: string; kind: string; status: string }[];
  usage: { input_tokens: number; cached_input_tokens: number; output_tokens: number } | null;
  /** The last `agent_message` (a claim, never evidence); "" when it said nothing. */
  final_message: string;
  /** `error` items and events, and `turn.failed` messages, in order. */
  errors: string[];
  /**
   * Top-level `error` events that are not a retry ("Reconnecting... …"): Codex gave up on something. An
   * `error` item is a warning (e.g. "Model metadata for `scripted` not found"), never counted here.
   */
  fatal_errors: number;
  turns_completed: number;
  turn_failed: boolean;
  /** Lines that were not JSON objects (Codex's stderr warnings land here when interleaved). */
  unparsed_lines: number;
}

const Item = z.object({ id: z.string().optional(), type: z.string() }).passthrough();
const Event = z.object({ type: z.string() }).passthrough();

const str = (v: unknown): string => (typeof v === "string" ? v : "");
const int = (v: unknown): number | null => (typeof v === "number" && Number.isInteger(v) ? v : null);

/** Head and tail of a long output, the cut said. */
export function excerpt(text: string, max = 2000): string {
  if (text.length <= max) return text;
  const head = Math.floor(max * 0.3);
  return `${text.slice(0, head)}\n[… ${text.length - max} characters cut …]\n${text.slice(text.length - (max - head))}`;
}

/** Folds the JSONL of one `codex exec --json` run into facts. Pure: the same text gives the same facts. */
export function codexFacts(jsonl: string): CodexFacts {
  const facts: CodexFacts = {
    thread_id: null,
    commands: [],
    file_changes: [],
    usage: null,
    final_message: "",
    errors: [],
    fatal_errors: 0,
    turns_completed: 0,
    turn_failed: false,
    unparsed_lines: 0,
  };
  for (const line of jsonl.split("\n")) {
    const trimmed = line.trim();
    if (trimmed === "") continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      facts.unparsed_lines += 1;
      continue;
    }
    const event = Event.safeParse(parsed);
    if (!event.success) {
      facts.unparsed_lines += 1;
      continue;
    }
    const e = event.data as Record<string, unknown> & { type: string };
    switch (e.type) {
      case "thread.started":
        facts.thread_id = str(e.thread_id) || null;
        break;
      case "turn.completed": {
        facts.turns_completed += 1;
        const u = (e.usage ?? {}) as Record<string, unknown>;
        const prev = facts.usage ?? { input_tokens: 0, cached_input_tokens: 0, output_tokens: 0 };
        facts.usage = {
          input_tokens: prev.input_tokens + (int(u.input_tokens) ?? 0),
          cached_input_tokens: prev.cached_input_tokens + (int(u.cached_input_tokens) ?? 0),
          output_tokens: prev.output_tokens + (int(u.output_tokens) ?? 0),
        };
        break;
      }
      case "turn.failed":
        facts.turn_failed = true;
        facts.errors.push(str((e.error as Record<string, unknown> | undefined)?.message) || "turn failed");
        break;
      case "error":
        facts.errors.push(str(e.message) || "error");
        if (!str(e.message).startsWith("Reconnecting...")) facts.fatal_errors += 1;
        break;
      case "item.completed": {
        const item = Item.safeParse(e.item);
        if (item.success) completed(facts, item.data as Record<string, unknown> & { type: string });
        break;
      }
      default:
        break;
    }
  }
  return facts;
}

function completed(facts: CodexFacts, item: Record<string, unknown> & { type: string }): void {
  if (item.type === "command_execution")
    facts.commands.push({
      command: str(item.command),
      exit_code: int(item.exit_code),
      status: str(item.status),
      output_excerpt: excerpt(str(item.aggregated_output)),
    });
  else if (item.type === "file_change") {
    const changes = Array.isArray(item.changes) ? item.changes : [];
    for (const c of changes as Record<string, unknown>[])
      facts.file_changes.push({ path: str(c.path), kind: str(c.kind), status: str(item.status) });
  } else if (item.type === "agent_message") facts.final_message = str(item.text);
  else if (item.type === "error") facts.errors.push(str(item.message));
}

/** The facts as lines for the builder's output (its excerpt in the log); the final message comes last. */
export function describeFacts(facts: CodexFacts): string {
  const lines = [`codex: thread ${facts.thread_id ?? "?"}, ${facts.turns_completed} turn(s) completed`];
  for (const c of facts.commands)
    lines.push(
      `codex: $ ${c.command.slice(0, 300)} → ${c.exit_code === null ? c.status : `exit ${c.exit_code}`}`,
    );
  for (const f of facts.file_changes) lines.push(`codex: file ${f.kind} ${f.path} (${f.status})`);
  if (facts.usage)
    lines.push(
      `codex: usage ${facts.usage.input_tokens} input (${facts.usage.cached_input_tokens} cached), ${facts.usage.output_tokens} output tokens`,
    );
  for (const e of facts.errors) lines.push(`codex: error: ${e.slice(0, 500)}`);
  if (facts.turn_failed) lines.push("codex: the turn failed");
  return lines.join("\n");
}

/**
 * The facts as the run log's typed events (origin agent_runtime): one `agent_tool_observed` per
 * command (its exit code and output excerpt) and per file change, then one `agent_session_finished`
 * with the usage (Codex's `input_tokens` already include the cached ones) and the final message
 * as its result excerpt. Pure: the same facts give the same events.
 */
export function codexRuntimeEvents(
  facts: CodexFacts,
  attempt: number,
  exitCode: number | null,
): AgentRuntimeEventBody[] {
  return [...codexToolEvents(facts, attempt), codexSessionEvent(facts, attempt, exitCode)];
}

/** One `agent_tool_observed` per command and per file change of `facts`. Pure. */
export function codexToolEvents(facts: CodexFacts, attempt: number): AgentRuntimeEventBody[] {
  const session = (facts.thread_id ?? "").slice(0, 200);
  const events: AgentRuntimeEventBody[] = [];
  for (const c of facts.commands)
    events.push({
      type: "agent_tool_observed",
      data: {
        attempt,
        agent: "codex",
        hook_event: "item.completed",
        session_id: session,
        tool: "command_execution",
        command: c.command.slice(0, 4000),
        exit_code: c.exit_code,
        excerpt: c.output_excerpt.slice(0, 4000),
      },
    });
  for (const f of facts.file_changes)
    events.push({
      type: "agent_tool_observed",
      data: {
        attempt,
        agent: "codex",
        hook_event: "item.completed",
        session_id: session,
        tool: "file_change",
        command: f.path.slice(0, 4000),
        exit_code: null,
        excerpt: `${f.kind} ${f.status}`.slice(0, 4000),
      },
    });
  return events;
}

/**
 * The `agent_session_finished` of one `codex exec` process: its turns, usage and final message. Pure.
 * `is_error` says the session really failed: a failed turn, an `error` event Codex gave up with, or a
 * non-zero exit that was not loopgate's own kill (`killedByLoopgate`: a verdict, an interrupt, a
 * timeout). Warnings (error items) and retries that then succeeded are no failure.
 */
export function codexSessionEvent(
  facts: CodexFacts,
  attempt: number,
  exitCode: number | null,
  options: { killedByLoopgate?: boolean } = {},
): AgentRuntimeEventBody {
  const exitFailed = exitCode !== null && exitCode !== 0 && options.killedByLoopgate !== true;
  return {
    type: "agent_session_finished",
    data: {
      attempt,
      agent: "codex",
      session_id: (facts.thread_id ?? "").slice(0, 200),
      exit_code: exitCode,
      subtype: facts.turn_failed ? "turn.failed" : facts.turns_completed > 0 ? "turn.completed" : null,
      is_error: facts.turn_failed || facts.fatal_errors > 0 || exitFailed,
      num_turns: facts.turns_completed,
      total_cost_usd: null,
      input_tokens: facts.usage?.input_tokens ?? null,
      output_tokens: facts.usage?.output_tokens ?? null,
      result_excerpt: facts.final_message.slice(0, 4000),
    },
  };
}
