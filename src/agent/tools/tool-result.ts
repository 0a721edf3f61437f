import type { ToolResult } from "./tool.js";

/** Milliseconds since `started` (a performance.now() reading), rounded. */
export function elapsedMs(started: number): number {
  return Math.round(performance.now() - started);
}

/** A successful result. */
export function toolOk(
  subject: string,
  content: string,
  started: number,
  exitCode: number | null = 0,
): ToolResult {
  return { content, isError: false, exitCode, durationMs: elapsedMs(started), subject };
}

/** An error result the model can read; `exitCode` is null when nothing ran (refused, invalid). */
export function toolError(
  subject: string,
  content: string,
  started: number,
  exitCode: number | null = null,
): ToolResult {
  return { content, isError: true, exitCode, durationMs: elapsedMs(started), subject };
}
