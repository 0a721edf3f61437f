// loopgate's MCP server through the SDK's own client, in process (real bubblewrap, real SQLite).
import { cpSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { afterAll, describe, expect, it } from "vitest";
import { createLoopgateMcp } from "../../src/mcp/loopgate-mcp.js";
import { loadTask } from "../../src/runner/task-source/load-task.js";
import { SqliteEventStore } from "../../src/store/sqlite/sqlite-event-store.js";
import { addTask } from "../e2e/claude-support.js";
import { removeTemps, tempDir } from "../e2e/cli.js";

afterAll(removeTemps);

async function connect() {
  const task = addTask();
  const work = tempDir("loopgate-mcp-work-");
  cpSync(join(dirname(task), "repo"), work, { recursive: true });
  const localDir = tempDir("loopgate-mcp-store-");
  const store = SqliteEventStore.open(join(localDir, "events.db"));
  const server = createLoopgateMcp({
    loaded: loadTask(task),
    workspace: work,
    store,
    localDir,
    sandbox: "bubblewrap",
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
  return {
    client,
    call,
    work,
    close: async () => {
      await client.close();
      await store.close();
    },
  };
}

describe("loopgate mcp (in-process SDK client)", { timeout: 120_000 }, () => {
  it("lists the five protocol tools", async () => {
    const c = await connect();
    const { tools } = await c.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      ["goal_status", "self_check_plan_submit", "self_check_submit", "todo_write", "verify"].sort(),
    );
    await c.close();
  });

  it("verify: fails with the feedback-bounded required fix, then SUCCESS once the work is right; goal_status follows", async () => {
    const c = await connect();
    const bad = await c.call("verify");
    expect(bad.isError).toBe(true);
    expect(bad.text).toMatch(/Required fix/);
    expect(bad.text).not.toContain("adds negatives");
    const status = JSON.parse((await c.call("goal_status")).text);
    expect(status.done).toBe(false);
    // The held-out gate exited 1; its summary feedback allows no exit code or error word in goal_status.
    expect(status.last_verify.status).toBe("ESCALATED");
    expect(status.last_verify.reason).not.toMatch(/exit|failed \(|\d/);
    writeFileSync(join(c.work, "add.js"), "module.exports = (a, b) => a + b;\n");
    const good = await c.call("verify");
    expect(good.isError, good.text).toBe(false);
    expect(good.text).toMatch(/^SUCCESS/);
    expect(JSON.parse((await c.call("goal_status")).text)).toMatchObject({
      done: true,
      last_verify: { status: "SUCCESS" },
    });
    await c.close();
  });

  it("todo_write runs a completed step's frozen check; a failing check is NOT verified; a changed frozen check is not taken", async () => {
    const c = await connect();
    await c.call("todo_write", {
      items: [
        {
          content: "fix add",
          status: "in_progress",
          check: "node -e \"process.exit(require('./add.js')(2,3)===5?0:1)\"",
        },
      ],
    });
    const done = await c.call("todo_write", { items: [{ content: "fix add", status: "completed" }] });
    expect(done.text).toMatch(/exited 1: NOT verified/);
    const changed = await c.call("todo_write", {
      items: [{ content: "fix add", status: "completed", check: "true" }],
    });
    expect(changed.text).toMatch(/frozen/);
    await c.close();
  });

  it("todo_write rejects a malformed plan with a message naming the field", async () => {
    const c = await connect();
    const r = await c.call("todo_write", { items: [{ content: "x", status: "finished" }] });
    expect(r.isError).toBe(true);
    expect(r.text).toMatch(/status/);
    await c.close();
  });

  it("self-check: a submission before a plan is refused; one quoting the held-out test is rejected by the Source Guard", async () => {
    const c = await connect();
    const submission = (reason: string) => ({
      status: "pass",
      publicReason: reason,
      artifactEvidence: [{ path: "add.js", kind: "final", exists: true }],
      executionHygiene: {
        sandboxRoot: "/tmp/loopgate-self-check",
        strategy: "scratch_dir",
        outputPolicy: "scratch_only",
        scratchUsed: false,
        cleanupRan: true,
        workspaceSideEffects: "none",
      },
    });
    const early = await c.call("self_check_submit", submission("add.js adds"));
    expect(early.isError).toBe(true);
    expect(early.text).toMatch(/plan first/);
    const plan = await c.call("self_check_plan_submit", {
      finalArtifacts: [{ path: "add.js", purpose: "the sum", publicReason: "the task names it" }],
      selfCheckScratch: { paths: ["/tmp/loopgate-self-check"], cleanup: true },
      workspaceGuardPlan: {},
    });
    expect(plan.isError, plan.text).toBe(false);
    const leak = await c.call(
      "self_check_submit",
      submission("checked assert.strictEqual(add(-2, -3), -5) from test/add.heldout.test.js"),
    );
    expect(leak.isError).toBe(true);
    expect(leak.text).toMatch(/Source Guard rejected/);
    expect(leak.text).not.toContain("-5");
    const ok = await c.call("self_check_submit", submission("add.js adds its two arguments"));
    expect(ok.isError, ok.text).toBe(false);
    expect(ok.text).toMatch(/advisory/);
    await c.close();
  });
});
