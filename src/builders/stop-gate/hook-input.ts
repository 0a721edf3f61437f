import { z } from "zod";
import type { EventData } from "../../core/events/loopgate-event.js";
import { boundText } from "../../core/kernel/bounded.js";

/**
 * The JSON Claude Code writes on a command hook's stdin (hooks reference: session_id, transcript_path,
 * cwd, hook_event_name, then per event). Unknown fields are kept out; the ones loopgate reads are checked.
 */
const base = {
  session_id: z.string().max(200).default(""),
  cwd: z.string().max(4096).optional(),
  transcript_path: z.string().max(4096).optional(),
  permission_mode: z.string().max(100).optional(),
};

export const StopInput = z.object({
  ...base,
  hook_event_name: z.literal("Stop"),
  stop_hook_active: z.boolean().default(false),
  last_assistant_message: z.string().max(1_000_000).nullish(),
});
export type StopInput = z.infer<typeof StopInput>;

export const PostToolInput = z.object({
  ...base,
  hook_event_name: z.enum(["PostToolUse", "PostToolUseFailure"]),
  tool_name: z.string().max(200),
  tool_input: z.record(z.string(), z.unknown()).default({}),
  tool_use_id: z.string().max(200).optional(),
  /** PostToolUse: Bash gives `{stdout, stderr, interrupted}`; other tools their own shape. */
  tool_response: z.unknown().optional(),
  /** PostToolUseFailure: begins with `Exit code N` for a failed Bash call. */
  error: z.string().max(1_000_000).optional(),
});
export type PostToolInput = z.infer<typeof PostToolInput>;

export const TaskCompletedInput = z.object({
  ...base,
  hook_event_name: z.literal("TaskCompleted"),
  task_id: z.string().max(200).optional(),
  task_subject: z.string().max(4000).optional(),
  task_description: z.string().max(20_000).optional(),
});
export type TaskCompletedInput = z.infer<typeof TaskCompletedInput>;

export const HookInput = z.discriminatedUnion("hook_event_name", [
  StopInput,
  PostToolInput,
  TaskCompletedInput,
]);
export type HookInput = z.infer<typeof HookInput>;

/** The store stream of a user's own Claude Code session (what `loopgate hook post-tool` appends to). */
export const sessionStream = (sessionId: string) =>
  `claude-session-${sessionId.replace(/[^A-Za-z0-9_-]/g, "_").slice(0, 100)}`;

/** What a hook answers: its exit code, and what it prints on stdout and stderr. */
export interface HookReply {
  exit_code: number;
  stdout: string;
  stderr: string;
}

/** Parses hook stdin; a bad payload is a message naming the field, never a throw. */
export function parseHookInput(text: string): { input: HookInput } | { error: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return { error: `the hook's stdin is not JSON (${(e as Error).message})` };
  }
  const r = HookInput.safeParse(json);
  if (r.success) return { input: r.data };
  const issue = r.error.issues[0];
  return { error: `the hook's stdin: ${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "invalid"}` };
}

const str = (v: unknown) => (typeof v === "string" ? v : "");

/** The head and tail of `s` within `max` characters, the cut said. */
function excerptOf(s: string, max = 4000): string {
  return boundText(s, max);
}

/** What a tool call's input names: the Bash command, or the file a file tool touched, bounded; "" if neither. */
export function commandOf(input: Record<string, unknown>): string {
  const c = str(input.command) || str(input.file_path) || str(input.path) || str(input.notebook_path);
  return boundText(c, 4000);
}

/**
 * The runtime fact of one tool call as Claude Code reported it: the Bash command (or the file a file
 * tool touched), the exit code (0 for PostToolUse, N from `Exit code N` for PostToolUseFailure, null when
 * the failure names none or the call went to the background), and an excerpt of the output or error.
 */
export function toolFact(input: PostToolInput, attempt: number): EventData<"agent_tool_observed"> {
  const command = commandOf(input.tool_input);
  let exitCode: number | null;
  let output: string;
  if (input.hook_event_name === "PostToolUse") {
    // A Bash call sent to the background is reported as soon as it starts: its exit is not known yet.
    exitCode = input.tool_input.run_in_background === true ? null : 0;
    const r = input.tool_response;
    if (r && typeof r === "object") {
      const o = r as Record<string, unknown>;
      output =
        "stdout" in o || "stderr" in o
          ? [str(o.stdout), str(o.stderr)].filter(Boolean).join("\n")
          : JSON.stringify(r).slice(0, 4000);
    } else output = str(r);
  } else {
    const err = input.error ?? "";
    const m = /^Exit code (\d+)/.exec(err);
    exitCode = m ? Number(m[1]) : null;
    output = err;
  }
  const task = taskOf(input);
  return {
    attempt,
    agent: "claude-code",
    hook_event: input.hook_event_name,
    session_id: input.session_id,
    tool: input.tool_name,
    command,
    exit_code: exitCode,
    excerpt: excerptOf(output),
    ...(input.tool_use_id ? { call_id: input.tool_use_id } : {}),
    ...(task ? { task } : {}),
  };
}

type RuntimeTask = NonNullable<EventData<"agent_tool_observed">["task"]>;

/**
 * The task a TaskCreate or TaskUpdate call created or changed, from its input and response (TaskCreate
 * answers `{task: {id, subject, description}}`, TaskUpdate `{taskId, statusChange: {to}}`; a refused
 * update, `success: false`, changed nothing). Null for other tools.
 */
export function taskOf(input: PostToolInput): RuntimeTask | null {
  if (input.hook_event_name !== "PostToolUse") return null;
  const r = (input.tool_response ?? {}) as Record<string, unknown>;
  const ti = input.tool_input;
  const clip = (v: unknown, n: number) => (typeof v === "string" ? { v: v.slice(0, n) } : null);
  if (input.tool_name === "TaskCreate") {
    const t = (r.task ?? {}) as Record<string, unknown>;
    const id = clip(t.id, 200);
    if (!id) return null;
    const subject = clip(t.subject ?? ti.subject, 4000);
    const description = clip(t.description ?? ti.description, 20_000);
    return {
      id: id.v,
      ...(subject ? { subject: subject.v } : {}),
      ...(description ? { description: description.v } : {}),
      status: "pending",
    };
  }
  if (input.tool_name === "TaskUpdate") {
    if (r.success === false) return null;
    const id = clip(r.taskId ?? ti.taskId, 200);
    if (!id) return null;
    const change = (r.statusChange ?? {}) as Record<string, unknown>;
    const status = clip(change.to, 100);
    const description = clip(ti.description, 20_000);
    const subject = clip(ti.subject, 4000);
    return {
      id: id.v,
      ...(subject ? { subject: subject.v } : {}),
      ...(description ? { description: description.v } : {}),
      ...(status ? { status: status.v } : {}),
    };
  }
  return null;
}

/** True when a tool call touched (or named) a path loopgate owns: the hook settings or the gate script. */
export function touchesOwnedPath(input: PostToolInput, owned: readonly string[]): string | null {
  const text = JSON.stringify(input.tool_input);
  for (const p of owned) if (text.includes(p)) return p;
  if (/\.claude\/settings(\.local)?\.json/.test(text)) return ".claude/settings.json";
  return null;
}
