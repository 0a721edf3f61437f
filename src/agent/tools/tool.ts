import type { z } from "zod";
import type { LoopgateEvent } from "../../core/events.js";
import type { SandboxMode } from "../../sandbox/bubblewrap.js";

/** Where and how a tool runs: the run workspace in the agent sandbox. */
export interface ToolContext {
  /** Absolute path of the run workspace; every path the model gives is relative to it. */
  workspace: string;
  sandbox: SandboxMode;
  network: boolean;
  timeoutMs: number;
  signal?: AbortSignal;
  /** The run's events and whether step checks run, for the `todo` plan tool (set by the agent phase). */
  plan?: { events(): readonly LoopgateEvent[]; checks: boolean };
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

/** A tool: schema-first; `execute` receives arguments already validated against `schema`. */
export interface AgentTool<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  schema: S;
  /** True when the tool can change the workspace (bash, write_file, edit_file). */
  mutating: boolean;
  execute(args: z.infer<S>, ctx: ToolContext): Promise<ToolResult>;
}
