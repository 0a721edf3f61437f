import type { LoopgateEvent } from "../events/loopgate-event.js";
import { renderEscalation } from "./step-escalation.js";

/** One tool call the model asked for. `args` is unvalidated: tools validate centrally before executing. */
export interface ToolCall {
  id: string;
  name: string;
  args: unknown;
}

/**
 * The conversation as loopgate keeps it (rebuilt from events on resume). `origin` says who wrote a
 * user message: the operator's task prompt, loopgate's continuation prompt, or a runtime notice.
 */
export type AgentMessage =
  | { role: "user"; content: string; origin: "operator" | "continuation" | "runtime" }
  | { role: "assistant"; text: string; toolCalls: ToolCall[] }
  | { role: "tool"; callId: string; name: string; content: string; isError: boolean };

/**
 * The model's message list for one attempt: the opening `prompt`, then what the attempt's events say
 * (responses, tool results, continuations, and the fixed renderings of step findings onto the todo
 * result they appraise). Pure: a resume rebuilds the same list from the log.
 */
export function projectMessages(attemptEvents: readonly LoopgateEvent[], prompt: string): AgentMessage[] {
  const messages: AgentMessage[] = [{ role: "user", content: prompt, origin: "operator" }];
  const names = new Map<string, string>();
  const toolResults = new Map<string, number>();
  const append = (callId: string, text: string) => {
    const at = toolResults.get(callId);
    const m = at === undefined ? undefined : messages[at];
    if (m?.role === "tool") messages[at as number] = { ...m, content: `${m.content}\n${text}` };
  };
  for (const e of attemptEvents)
    switch (e.type) {
      case "model_responded": {
        const calls = e.data.tool_calls.map((c) => ({ id: c.id, name: c.name, args: c.args }));
        for (const c of calls) names.set(c.id, c.name);
        messages.push({ role: "assistant", text: e.data.text, toolCalls: calls });
        break;
      }
      case "tool_call_finished":
      case "tool_call_abandoned": {
        const id = e.data.call_id;
        const finished = e.type === "tool_call_finished";
        toolResults.set(id, messages.length);
        messages.push({
          role: "tool",
          callId: id,
          name: names.get(id) ?? "unknown",
          content: finished ? e.data.content : e.data.reason,
          isError: finished ? e.data.is_error : true,
        });
        break;
      }
      case "continuation_queued":
        messages.push({ role: "user", content: e.data.text, origin: "continuation" });
        break;
      case "step_appraised":
        // The finding is rendered onto the todo result it appraises (before the model reads it).
        if (e.data.rendered) append(e.data.call_id, e.data.rendered);
        break;
      case "step_escalated": {
        // Only the fixed template is rendered, and only for revise_plan: the reviewer's words never are.
        const nudge = renderEscalation(e.data.decision);
        if (nudge) append(e.data.call_id, nudge);
        break;
      }
    }
  return messages;
}
