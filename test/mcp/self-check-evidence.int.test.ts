// loopgate mcp's self_check_submit links cited evidence to recorded tool calls (in process, SDK client,
// real SQLite, real bubblewrap): calls Claude Code's PostToolUse hook reported into the session's stream,
// and the frozen checks the server ran itself. An unrecorded or misquoted call is refused.
import { randomUUID } from "node:crypto";
import { cpSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterAll, describe, expect, it } from "vitest";
import { sessionStream } from "../../src/builders/stop-gate/hook-input.js";
import type { EventData } from "../../src/core/events/loopgate-event.js";
import { createLoopgateMcp } from "../../src/mcp/loopgate-mcp.js";
import { loadTask } from "../../src/runner/task-source/load-task.js";
import { SqliteEventStore } from "../../src/store/sqlite/sqlite-event-store.js";
import { addTask } from "../e2e/claude-support.js";
import { removeTemps, tempDir } from "../e2e/cli.js";

afterAll(removeTemps);

const reported = (o: Partial<EventData<"agent_tool_observed">>): EventData<"agent_tool_observed"> => ({
  attempt: 1,
  agent: "claude-code",
  hook_event: "PostToolUse",
  session_id: "s1",
  tool: "Bash",
  command: "node --test test/",
  exit_code: 0,
  excerpt: "# pass 1\n# fail 0",
  call_id: "toolu_9",
  ...o,
});

async function connect(facts: EventData<"agent_tool_observed">[]) {
  const task = addTask();
  const work = tempDir("loopgate-mcp-ev-work-");
  cpSync(join(dirname(task), "repo"), work, { recursive: true });
  const localDir = tempDir("loopgate-mcp-ev-store-");
  const store = SqliteEventStore.open(join(localDir, "events.db"));
  // What `loopgate hook post-tool` appends for the session (origin agent_runtime).
  await store.append(
    sessionStream("s1"),
    facts.map((data) => ({
      id: randomUUID(),
      type: "agent_tool_observed" as const,
      data,
      meta: { at: new Date().toISOString(), origin: "agent_runtime" as const },
    })),
    "any",
  );
  const server = createLoopgateMcp({
    loaded: loadTask(task),
    workspace: work,
    store,
    localDir,
    sandbox: "bubblewrap",
    sessionId: "s1",
  });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: "test", version: "1" });
  await client.connect(b);
  const call = async (name: string, args: Record<string, unknown> = {}) => {
    const r = (await client.callTool({ name, arguments: args })) as {
      content: { text: string }[];
      isError?: boolean;
    };
    return { text: r.content.map((c) => c.text).join("\n"), isError: r.isError === true };
  };
  const plan = await call("self_check_plan_submit", {
    finalArtifacts: [{ path: "add.js", purpose: "the sum", publicReason: "the task names it" }],
    selfCheckScratch: { paths: ["/tmp/loopgate-self-check"], cleanup: true },
    workspaceGuardPlan: {},
  });
  expect(plan.isError, plan.text).toBe(false);
  return { call, work, close: () => client.close().then(() => store.close()) };
}

const submission = (commandEvidence: Record<string, unknown>[]) => ({
  status: "pass",
  publicReason: "the visible tests pass",
  commandEvidence,
  executionHygiene: {
    sandboxRoot: "/tmp/loopgate-self-check",
    strategy: "scratch_dir",
    outputPolicy: "scratch_only",
    scratchUsed: false,
    cleanupRan: true,
    workspaceSideEffects: "none",
  },
});

describe("loopgate mcp self_check_submit: evidence linked to recorded tool calls", {
  timeout: 120_000,
}, () => {
  it("citing a call loopgate has no record of is refused, naming it", async () => {
    const c = await connect([reported({})]);
    const r = await c.call(
      "self_check_submit",
      submission([{ toolCallId: "toolu_made_up", command: "node --test test/", exitCode: 0 }]),
    );
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/self-check refused/);
    expect(r.text).toContain("evidence_unknown_call: no recorded tool call toolu_made_up");
    await c.close();
  });

  it("a reported call cited as it was recorded is accepted; a misquoted output or exit code is refused", async () => {
    const c = await connect([
      reported({}),
      reported({ call_id: "toolu_10", exit_code: 1, hook_event: "PostToolUseFailure" }),
    ]);
    const good = await c.call(
      "self_check_submit",
      submission([
        { toolCallId: "toolu_9", command: "node --test test/", exitCode: 0, outputExcerpt: "# fail 0" },
      ]),
    );
    expect(good.isError, good.text).toBe(false);
    expect(good.text).toMatch(/matches loopgate's records/);
    const misquoted = await c.call(
      "self_check_submit",
      submission([{ toolCallId: "toolu_9", command: "node --test test/", outputExcerpt: "# pass 7" }]),
    );
    expect(misquoted.isError).toBe(true);
    expect(misquoted.text).toContain(
      "evidence_mismatch: toolu_9: the recorded result differs in output excerpt",
    );
    const failed = await c.call(
      "self_check_submit",
      submission([{ toolCallId: "toolu_10", command: "node --test test/", exitCode: 0 }]),
    );
    expect(failed.isError).toBe(true);
    expect(failed.text).toMatch(/exit code \(claimed 0, recorded 1\)/);
    expect(failed.text).toMatch(/cited_call_failed: toolu_10 failed/);
    await c.close();
  });

  it("a frozen check the server ran is citable by the id todo_write named", async () => {
    const c = await connect([]);
    writeFileSync(join(c.work, "add.js"), "module.exports = (a, b) => a + b;\n");
    await c.call("todo_write", {
      items: [{ content: "fix", status: "in_progress", check: "node --test test/" }],
    });
    const done = await c.call("todo_write", { items: [{ content: "fix", status: "completed" }] });
    expect(done.text).toMatch(/\(call loopgate-check-1\).*exited 0: verified/);
    const r = await c.call(
      "self_check_submit",
      submission([{ toolCallId: "loopgate-check-1", command: "node --test test/", exitCode: 0 }]),
    );
    expect(r.isError, r.text).toBe(false);
    const wrong = await c.call(
      "self_check_submit",
      submission([{ toolCallId: "loopgate-check-1", command: "true", exitCode: 0 }]),
    );
    expect(wrong.isError).toBe(true);
    expect(wrong.text).toMatch(/differs in command/);
    await c.close();
  });
});
