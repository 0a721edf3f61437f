import { PathEscapeError } from "../../workspace/safe-path.js";
import { FileOpError } from "./file-ops.js";
import type { ToolOutput, ToolResult } from "./tool.js";
import { toolError } from "./tool-result.js";

/**
 * Runs a file tool's body, turning a refused path into an error result that did not run (exit code
 * null) and a failed file operation into one that did (exit code 1). Anything else propagates to
 * executeToolCall, which reports it.
 */
export async function refusalOr(
  subject: string,
  started: number,
  body: () => Promise<ToolResult>,
): Promise<ToolOutput> {
  try {
    return { result: await body() };
  } catch (e) {
    if (e instanceof PathEscapeError)
      return {
        result: toolError(subject, `refused: ${e.message}. Paths must stay inside the workspace.`, started),
      };
    if (e instanceof FileOpError) return { result: toolError(subject, e.message, started, 1) };
    throw e;
  }
}
