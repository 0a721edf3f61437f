import type { ScriptedResponse } from "../script-file.js";
import type { WireToolCall } from "./wire.js";

/**
 * A scripted response names the client's tool directly (`Bash` for Claude Code, `shell` or
 * `exec_command` for Codex) with the arguments that tool takes. One convenience: loopgate's own
 * `bash {command}` is mapped to the shell tool the request offers, when it offers no `bash`:
 *
 * | offered            | arguments sent                              |
 * |--------------------|---------------------------------------------|
 * | `Bash`             | `{command}` (Claude Code)                   |
 * | `shell`            | `{command: ["bash", "-lc", command]}`       |
 * | `shell_command`    | `{command}`                                 |
 * | `exec_command`     | `{cmd: command}`                            |
 *
 * Any other name is sent as written: a tool the client does not have is the client's error to
 * report, so a script can test that too.
 */
export function mapToolCalls(
  response: ScriptedResponse,
  step: number,
  offered: readonly string[],
  idPrefix: string,
): WireToolCall[] {
  return response.tool_calls.map((call, index) => {
    const id = call.id ?? `${idPrefix}${step}_${index}`;
    if (call.name !== "bash" || offered.includes("bash")) return { id, name: call.name, args: call.args };
    const command = commandOf(call.args);
    if (command === undefined) return { id, name: call.name, args: call.args };
    for (const [name, shape] of SHELLS) if (offered.includes(name)) return { id, name, args: shape(command) };
    return { id, name: call.name, args: call.args };
  });
}

const SHELLS: readonly [string, (command: string) => unknown][] = [
  ["Bash", (command) => ({ command })],
  ["shell", (command) => ({ command: ["bash", "-lc", command] })],
  ["shell_command", (command) => ({ command })],
  ["exec_command", (command) => ({ cmd: command })],
];

function commandOf(args: unknown): string | undefined {
  if (args === null || typeof args !== "object") return undefined;
  const command = (args as { command?: unknown }).command;
  return typeof command === "string" ? command : undefined;
}
