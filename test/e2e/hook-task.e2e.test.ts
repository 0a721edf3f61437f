// `loopgate hook task-completed TASK` and the goal part of `hook stop` as a user's own Claude Code runs
// them (hook JSON on stdin; real bubblewrap, real SQLite): a failing frozen check refuses the completion.
import { spawn } from "node:child_process";
import { appendFileSync, cpSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterAll, describe, expect, it } from "vitest";
import { createLoopgateMcp } from "../../src/mcp/loopgate-mcp.js";
import { loadTask } from "../../src/runner/task-source/load-task.js";
import { SqliteEventStore } from "../../src/store/sqlite/sqlite-event-store.js";
import { addTask } from "./claude-support.js";
import { BIN, removeTemps, tempDir } from "./cli.js";

afterAll(removeTemps);

function hook(args: string[], input: unknown) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [BIN, "hook", ...args], { stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(JSON.stringify(input));
  });
}

/** The session's stream, read from the store file the hooks wrote. */
async function streamEvents(store: string, stream: string) {
  const s = SqliteEventStore.open(join(store, "events.db"));
  try {
    return (await s.readStream(stream)).map((e) => ({
      type: e.type,
      data: e.data as Record<string, unknown>,
    }));
  } finally {
    await s.close();
  }
}

function setUp() {
  const task = addTask();
  const work = tempDir("loopgate-hook-task-work-");
  cpSync(join(dirname(task), "repo"), work, { recursive: true });
  return { task, work, store: tempDir("loopgate-hook-task-store-") };
}

describe("loopgate hook task-completed and the goal at stop (a user's own session)", {
  timeout: 200_000,
}, () => {
  it("a failing frozen check refuses the completion with its output; after the fix it is allowed; both recorded", async () => {
    const { task, work, store } = setUp();
    const completed = {
      session_id: "sess-t",
      hook_event_name: "TaskCompleted",
      cwd: work,
      task_id: "1",
      task_subject: "Make add.js add",
      task_description: "check: node --test test/",
    };
    const bad = await hook(["task-completed", task, "--store", store], completed);
    expect(bad.code, bad.stderr).toBe(2);
    expect(bad.stderr).toContain(
      'the check step "Make add.js add" declared ("node --test test/") ran and did not pass',
    );
    expect(bad.stderr).toContain("not ok 1 - adds");
    writeFileSync(join(work, "add.js"), "module.exports = (a, b) => a + b;\n");
    const good = await hook(["task-completed", task, "--store", store], completed);
    expect(good.code, good.stderr).toBe(0);
    const ev = await streamEvents(store, "claude-session-sess-t");
    expect(ev.filter((e) => e.type === "agent_step_appraised").map((e) => e.data.blocked)).toEqual([
      true,
      false,
    ]);
    const none = await hook(["task-completed", task, "--store", store], {
      ...completed,
      task_description: "x",
    });
    expect(none.code, none.stderr).toBe(0);
  });

  it("with a goal, stop blocks on the unmet command before any gate runs; once recorded, the gates decide", async () => {
    const { task, work, store } = setUp();
    appendFileSync(task, 'goal:\n  all:\n    - command_succeeded: "node --test test/"\n');
    writeFileSync(join(work, "add.js"), "module.exports = (a, b) => a + b;\n");
    const stop = { session_id: "sess-g", hook_event_name: "Stop", cwd: work, stop_hook_active: false };
    const first = await hook(["stop", task, "--store", store], stop);
    expect(first.code, first.stderr).toBe(2);
    expect(first.stderr).toContain("- command_succeeded: node --test test/");
    expect(first.stderr).not.toMatch(/Required fix/); // the goal blocked; no verify run happened
    const post = await hook(["post-tool", task, "--store", store], {
      session_id: "sess-g",
      hook_event_name: "PostToolUse",
      tool_name: "Bash",
      tool_input: { command: "node --test test/" },
      tool_response: { stdout: "# pass 1", stderr: "", interrupted: false },
    });
    expect(post.code, post.stderr).toBe(0);
    const second = await hook(["stop", task, "--store", store], { ...stop, stop_hook_active: true });
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toMatch(/SUCCESS/);
    const ev = await streamEvents(store, "claude-session-sess-g");
    expect(ev.filter((e) => e.type === "agent_goal_evaluated").map((e) => e.data.outcome)).toEqual([
      "continuing",
      "completed",
    ]);
  });

  it("a step declared through loopgate mcp's todo_write gives Claude's task of the same words its frozen check", async () => {
    const { task, work, store } = setUp();
    const db = SqliteEventStore.open(join(store, "events.db"));
    const server = createLoopgateMcp({
      loaded: loadTask(task),
      workspace: work,
      store: db,
      localDir: store,
      sandbox: "bubblewrap",
      sessionId: "sess-m",
    });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await server.connect(a);
    const client = new Client({ name: "test", version: "1" });
    await client.connect(b);
    const check = "node -e \"process.exit(require('./add.js')(2,3)===5?0:1)\"";
    await client.callTool({
      name: "todo_write",
      arguments: { items: [{ content: "Make add.js add", status: "in_progress", check }] },
    });
    await client.close();
    await db.close();
    const completed = {
      session_id: "sess-m",
      hook_event_name: "TaskCompleted",
      cwd: work,
      task_id: "7",
      task_subject: "Make add.js add",
      task_description: "no check line here",
    };
    const bad = await hook(["task-completed", task, "--store", store], completed);
    expect(bad.code, bad.stderr).toBe(2);
    expect(bad.stderr).toContain("require('./add.js')(2,3)===5");
    writeFileSync(join(work, "add.js"), "module.exports = (a, b) => a + b;\n");
    const good = await hook(["task-completed", task, "--store", store], completed);
    expect(good.code, good.stderr).toBe(0);
    const other = await hook(["task-completed", task, "--store", store], {
      ...completed,
      task_subject: "Other",
    });
    expect(other.code, other.stderr).toBe(0);
    const ev = await streamEvents(store, "claude-session-sess-m");
    expect(
      ev
        .filter((e) => e.type === "agent_step_appraised")
        .map((e) => (e.data.check as { status: string } | null)?.status ?? null),
    ).toEqual(["failed", "passed", null]);
  });
});
