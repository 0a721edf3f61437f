import { accessSync, constants, existsSync, statSync } from "node:fs";

/** How to install the Claude Code loopgate pins (package.json devDependencies). */
export const CLAUDE_INSTALL =
  "npm install @anthropic-ai/claude-code@2.1.328 (loopgate's dev dependency pins it), or set LOOPGATE_CLAUDE_BIN to its binary";

/**
 * Why the claude binary cannot be started (not there, not a file, not executable), naming it and how to
 * install it; null when it can. A builder that cannot start is a TOOL_FAILURE before any attempt runs.
 */
export function claudePreflight(program: string): string | null {
  if (!existsSync(program))
    return `Claude Code cannot be started: ${program} does not exist; ${CLAUDE_INSTALL}`;
  if (!statSync(program).isFile())
    return `Claude Code cannot be started: ${program} is not a file; ${CLAUDE_INSTALL}`;
  try {
    accessSync(program, constants.X_OK);
  } catch {
    return `Claude Code cannot be started: ${program} is not executable; reinstall it (${CLAUDE_INSTALL}) or chmod +x it`;
  }
  return null;
}
