import type { z } from "zod";
import type { AgentEventBody } from "../../core/run/run-decider.js";
import type { SandboxMode } from "../../sandbox/bubblewrap.js";

/** Where and how a tool runs: the run workspace in the agent sandbox. Nothing tool-specific lives here. */
export interface ToolContext {
  /** Absolute path of the run workspace; every path the model gives is relative to it. */
  workspace: string;
  sandbox: SandboxMode;
  network: boolean;
  timeoutMs: number;
  signal?: AbortSignal;
  /** Shared dependency folders (`path` relative to the workspace), mounted read-only in bash's sandbox. */
  dependencies?: readonly { source: string; path: string }[];
}

/** The context of one call: the run's, plus the call's id (a tool's facts name the call they came from). */
export interface ToolCallContext extends ToolContext {
  callId: string;
}

/** What a tool call produced. `content` is what the model reads (bounded, the cut said). */
export interface ToolResult {
  content: string;
  isError: boolean;
  /** Exit code of the command (bash), 0/1 for file tools, null when it did not run. */
  exitCode: number | null;
  durationMs: number;
  /** What the call was about, for evidence: the bash command, the file path. */
  subject: string;
}

/**
 * What `execute` returns: the result the model reads, and the domain facts the call established (a plan
 * write, a self-check). The loop records `tool_call_finished` and then these events, the same way for
 * every tool.
 */
export interface ToolOutput {
  result: ToolResult;
  events?: readonly AgentEventBody[];
}

/**
 * A tool: schema-first; `execute` receives arguments already validated against `schema` (once, centrally,
 * in registry.ts). Per-tool dependencies (the plan so far, loopgate's observer) are bound when the tool is
 * created, never carried in the context.
 */
export interface AgentTool<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  schema: S;
  /** True when the tool can change the workspace (bash, write_file, edit_file). */
  mutating: boolean;
  /**
   * True when every successful result carries at least one event. Such a tool must be read-only: after a
   * crash between its result and its facts, the call is run again and only its facts are recorded.
   */
  facts?: boolean;
  execute(args: z.infer<S>, ctx: ToolCallContext): Promise<ToolOutput>;
}
