import type { EventData } from "../../core/events/loopgate-event.js";
import { commandOf } from "../stop-gate/hook-input.js";
import type { StreamToolCall } from "./stream-json.js";

/**
 * Hook reports checked against Claude Code's own record. A PostToolUse report reaches loopgate over the
 * hook socket, which the agent can reach too (its hooks run in its sandbox), so a report alone proves
 * nothing. Claude's stream-json (its stdout, read by loopgate, see stream-json.ts) prints each call's
 * tool_use block and then its tool_result: a report counts only when that stream holds the same call.
 * A report usually arrives before its tool_result is printed, so reports wait in order and are decided
 * lazily, at the latest at the next Stop (`final`), before the goal is judged.
 */

type Fact = EventData<"agent_tool_observed">;

/** What the stream says of one report: confirmed, or not (with why). */
export type Confirmation = { confirmed: true } | { confirmed: false; why: string };

const no = (why: string): Confirmation => ({ confirmed: false, why });

/**
 * Whether Claude's stream holds the reported call: a tool_use with the report's tool_use_id, the same
 * tool and command (file path for a file tool), and a tool_result whose outcome is the report's (an
 * error for PostToolUseFailure, with the same `Exit code N` when the report names one; no error for
 * PostToolUse). `reported`: a report with this id was confirmed already (each call is reported once).
 * Null while the stream may still print what is missing; with `final`, missing is a no.
 */
export function confirmation(
  fact: Fact,
  call: StreamToolCall | undefined,
  o: { final: boolean; reported: boolean },
): Confirmation | null {
  if (fact.hook_event !== "PostToolUse" && fact.hook_event !== "PostToolUseFailure")
    return no(`${fact.hook_event} is not a tool report`);
  const id = fact.call_id;
  if (!id) return no("the report carries no tool_use_id");
  if (o.reported) return no(`tool_use ${id} was reported already`);
  if (!call) return o.final ? no(`Claude Code's stream holds no tool_use ${id}`) : null;
  if (call.name !== fact.tool) return no(`tool_use ${id} is a ${call.name} call, not ${fact.tool}`);
  if (commandOf(call.input) !== fact.command)
    return no(`tool_use ${id} ran something else than the report says`);
  if (call.input.run_in_background === true && fact.exit_code === 0)
    return no(`tool_use ${id} went to the background: its exit code is not known`);
  if (!call.result) return o.final ? no(`Claude Code's stream holds no result of tool_use ${id}`) : null;
  const failed = fact.hook_event === "PostToolUseFailure";
  if (call.result.isError !== failed)
    return no(`the stream's result of tool_use ${id} is ${call.result.isError ? "an error" : "a success"}`);
  if (failed && fact.exit_code !== null) {
    const m = /^Exit code (\d+)/.exec(call.result.text);
    if (!m || Number(m[1]) !== fact.exit_code)
      return no(`the stream's result of tool_use ${id} is not exit code ${fact.exit_code}`);
  }
  return { confirmed: true };
}

/** A decided report: the fact with `confirmed` set, and why when it is not. */
export interface SettledReport {
  fact: Fact;
  why: string | null;
}

/**
 * The tool reports of one `loopgate claude` session not yet decided, in the order they arrived. They are
 * decided in that order (a later report waits behind an earlier undecided one), so the facts keep the
 * order the goal's staleness rule reads.
 */
export class ToolReports {
  private queue: Fact[] = [];
  private confirmed = new Set<string>();

  report(fact: Fact): void {
    this.queue.push(fact);
  }

  /** How many reports wait for the stream. */
  get waiting(): number {
    return this.queue.length;
  }

  /** The reports the stream now decides, in order; with `final`, all of them. */
  settle(calls: ReadonlyMap<string, StreamToolCall>, final: boolean): SettledReport[] {
    const out: SettledReport[] = [];
    for (let f = this.queue[0]; f; f = this.queue[0]) {
      const id = f.call_id;
      const c = confirmation(f, id ? calls.get(id) : undefined, {
        final,
        reported: id ? this.confirmed.has(id) : false,
      });
      if (!c) break;
      this.queue.shift();
      if (c.confirmed && id) this.confirmed.add(id);
      out.push({ fact: { ...f, confirmed: c.confirmed }, why: c.confirmed ? null : c.why });
    }
    return out;
  }
}

/**
 * Whether Claude's stream holds the TaskUpdate call that marks task `taskId` completed: the call a real
 * TaskCompleted hook runs inside (its tool_use is printed before the tool runs).
 */
export function taskCompletion(calls: ReadonlyMap<string, StreamToolCall>, taskId: string): boolean {
  for (const c of calls.values())
    if (c.name === "TaskUpdate" && c.input.taskId === taskId && c.input.status === "completed") return true;
  return false;
}
