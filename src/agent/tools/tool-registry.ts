import type { z } from "zod";
import { formatPath } from "../../core/kernel/errors.js";
import type { AgentEventBody } from "../../core/run/run-decider.js";
import type { ToolCall, ToolSpec } from "../models/model.js";
import { bashTool } from "./bash.js";
import { editFileTool } from "./edit-file.js";
import { listFilesTool } from "./list-files.js";
import { readFileTool } from "./read-file.js";
import type { AgentTool, ToolContext, ToolResult } from "./tool.js";
import { elapsedMs } from "./tool-result.js";
import { writeFileTool } from "./write-file.js";

/** The built-in agent's tools, each running in the agent sandbox. */
export const defaultTools: AgentTool[] = [bashTool, readFileTool, writeFileTool, editFileTool, listFilesTool];

/** The tools as the model sees them. */
export function toolSpecs(tools: readonly AgentTool[]): ToolSpec[] {
  return tools.map((t) => ({ name: t.name, description: t.description, inputSchema: t.schema }));
}

/** Whether a call to `name` can change the workspace; an unknown name counts as mutating, to be safe. */
export function isMutating(tools: readonly AgentTool[], name: string): boolean {
  return tools.find((t) => t.name === name)?.mutating ?? true;
}

/** A tool result, plus whether the arguments were valid (false: the tool did not run) and the call's facts. */
export type ExecutedToolResult = ToolResult & { valid: boolean; events: readonly AgentEventBody[] };

/** The first string among `keys` in raw arguments, for the evidence subject of a call that did not run. */
function rawSubject(args: unknown, fallback: string): string {
  if (args && typeof args === "object")
    for (const key of ["command", "path"]) {
      const v = (args as Record<string, unknown>)[key];
      if (typeof v === "string") return v.slice(0, 1000);
    }
  return fallback;
}

function describeIssue(issue: z.core.$ZodIssue, args: unknown): string {
  const where = formatPath(issue.path);
  if (issue.code === "unrecognized_keys") return `${where}: unexpected field(s) ${issue.keys.join(", ")}`;
  let value: unknown = args;
  for (const k of issue.path) value = value && typeof value === "object" ? (value as never)[k] : undefined;
  if (issue.code === "invalid_type" && value === undefined && issue.path.length > 0)
    return `${where}: required (expected ${issue.expected})`;
  return `${where}: ${issue.message}`;
}

/**
 * The one place a model's tool call is executed: finds the tool, validates the arguments against its
 * schema (the tool does not run when they are invalid), runs it, and turns any thrown error into an
 * error result. Never throws: every outcome is a result the model can read. A call that failed carries
 * no facts.
 */
export async function executeToolCall(
  tools: readonly AgentTool[],
  call: ToolCall,
  ctx: ToolContext,
): Promise<ExecutedToolResult> {
  const started = performance.now();
  const fail = (content: string, valid: boolean, subject: string): ExecutedToolResult => ({
    content,
    isError: true,
    exitCode: null,
    durationMs: elapsedMs(started),
    subject,
    valid,
    events: [],
  });
  const tool = tools.find((t) => t.name === call.name);
  if (!tool)
    return fail(
      `unknown tool ${JSON.stringify(call.name)}; the available tools are: ${tools.map((t) => t.name).join(", ")}`,
      false,
      call.name,
    );
  // A tool with no required fields may be called with no arguments at all.
  const args = call.args === undefined || call.args === null ? {} : call.args;
  const parsed = tool.schema.safeParse(args);
  if (!parsed.success)
    return fail(
      `invalid arguments for ${tool.name}, so it did not run:\n` +
        parsed.error.issues.map((i) => `- ${describeIssue(i, args)}`).join("\n"),
      false,
      rawSubject(args, tool.name),
    );
  try {
    const out = await tool.execute(parsed.data, { ...ctx, callId: call.id });
    return { ...out.result, valid: true, events: out.events ?? [] };
  } catch (e) {
    const message = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    return fail(`${tool.name} failed: ${message}`, true, rawSubject(args, tool.name));
  }
}
