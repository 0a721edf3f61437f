import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type AgentDeps, runAgentAttempt } from "../../src/agent/agent-loop.js";
import { scriptedModel } from "../../src/agent/models/scripted-model.js";
import { createTodoTool } from "../../src/agent/todo/todo-tool.js";
import { readFileTool } from "../../src/agent/tools/read-file.js";
import type { AgentTool } from "../../src/agent/tools/tool.js";
import type { LoopgateEvent, Origin } from "../../src/core/events/loopgate-event.js";
import type { AgentEventBody } from "../../src/core/run/run-decider.js";

// Every tool's facts go through one path: tool_call_started, tool_call_finished, then the events the tool
// returned, whatever the tool. A fact-producing call whose facts a crash cut off is replayed on resume.

let ws: string;
beforeAll(async () => {
  ws = await mkdtemp(join(tmpdir(), "loopgate-tool-facts-"));
});
afterAll(async () => {
  await rm(ws, { recursive: true, force: true });
});

/** A tool of the test's own that returns a domain fact, as the todo and self-check tools do. */
const noteSchema = z.strictObject({ step: z.string() });
const noteTool: AgentTool<typeof noteSchema> = {
  name: "note",
  description: "records a skipped step check, as a fact",
  schema: noteSchema,
  mutating: false,
  facts: true,
  async execute(args, ctx) {
    return {
      result: { content: `noted ${args.step}`, isError: false, exitCode: 0, durationMs: 0, subject: "note" },
      events: [
        {
          type: "step_check_ran",
          data: {
            attempt: 1,
            call_id: ctx.callId,
            step: args.step,
            command: "true",
            status: "skipped",
            exit_code: null,
            detail: "noted",
            duration_ms: 0,
          },
        },
      ],
    };
  },
};

function harness(prior: LoopgateEvent[], responses: Parameters<typeof scriptedModel>[0]) {
  const log: LoopgateEvent[] = [...prior];
  const record = async (event: AgentEventBody, origin: Origin) => {
    log.push({
      id: `e${log.length}`,
      ...event,
      meta: { at: new Date(0).toISOString(), origin },
    } as LoopgateEvent);
  };
  const deps: AgentDeps = {
    attempt: 1,
    prompt: "Plan, note, read.",
    system: "test",
    model: scriptedModel(responses),
    tools: [createTodoTool({ attempt: 1, events: () => log, checks: true }), noteTool, readFileTool],
    toolCtx: { workspace: ws, sandbox: "none", network: false, timeoutMs: 10_000 },
    goal: null,
    budget: { turns: 3, stepsPerTurn: 10, modelRetries: 0 },
    record,
    events: () => log,
    observeAfter: async () => null,
    probe: async () => ({ holds: false, detail: "" }),
    runStartedAt: 0,
    now: () => 0,
    sleep: async () => {},
    stepChecks: { enabled: false, max: 16 },
  };
  return { log, deps };
}

const start = {
  id: "s",
  type: "attempt_started",
  data: { attempt: 1, required_fix: null },
  meta: { at: new Date(0).toISOString(), origin: "runtime" },
} as LoopgateEvent;
const types = (log: readonly LoopgateEvent[]) => log.map((e) => e.type);

describe("tool facts", () => {
  it("are recorded right after each tool's result, the same way for every tool", async () => {
    const { log, deps } = harness(
      [start],
      [
        {
          tool_calls: [
            { name: "todo", args: { items: [{ content: "a", status: "in_progress" }] } },
            { name: "note", args: { step: "a" } },
            { name: "list_files_missing", args: {} },
          ],
        },
        { text: "Done." },
      ],
    );
    expect(await runAgentAttempt(deps)).toEqual({ kind: "stopped", text: "Done." });
    expect(types(log)).toEqual([
      "attempt_started",
      "model_responded",
      "tool_call_started",
      "tool_call_finished",
      "todo_written",
      "tool_call_started",
      "tool_call_finished",
      "step_check_ran",
      "tool_call_started",
      "tool_call_finished",
      "model_responded",
    ]);
    const todo = log.find((e) => e.type === "todo_written");
    expect(todo?.data).toMatchObject({
      call_id: "call_1_0",
      items: [{ content: "a", status: "in_progress" }],
    });
    const note = log.find((e) => e.type === "step_check_ran");
    expect(note?.data).toMatchObject({ call_id: "call_1_1", step: "a" });
  });
  it("a call that fails validation records no facts", async () => {
    const { log, deps } = harness(
      [start],
      [{ tool_calls: [{ name: "note", args: { step: 3 } }] }, { text: "Done." }],
    );
    await runAgentAttempt(deps);
    expect(types(log)).toEqual([
      "attempt_started",
      "model_responded",
      "tool_call_started",
      "tool_call_finished",
      "model_responded",
    ]);
  });
  it("after a crash between a result and its facts, only the facts are recorded, once", async () => {
    const first = harness(
      [start],
      [{ tool_calls: [{ name: "note", args: { step: "b" } }] }, { text: "Done." }],
    );
    await runAgentAttempt(first.deps);
    const at = first.log.findIndex((e) => e.type === "tool_call_finished");
    const crashed = first.log.slice(0, at + 1);
    const resumed = {
      id: "r",
      type: "run_resumed",
      data: { from_revision: at, in_doubt: [], action: "continued" },
      meta: { at: new Date(0).toISOString(), origin: "runtime" },
    } as LoopgateEvent;
    // The model already gave its first response: the rest of the script is what a resumed run gets.
    const again = harness([...crashed, resumed], [{ text: "Done." }]);
    expect(await runAgentAttempt(again.deps)).toEqual({ kind: "stopped", text: "Done." });
    expect(types(again.log)).toEqual([
      "attempt_started",
      "model_responded",
      "tool_call_started",
      "tool_call_finished",
      "run_resumed",
      "step_check_ran",
      "model_responded",
    ]);
  });
});
