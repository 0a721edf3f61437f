// Every command that takes --store, on a real PostgreSQL: the Claude Code hooks, report and health read
// and write the database (not a local SQLite file); demo and exp refuse it with the command, the URL
// (password masked) and what to do, and change nothing.
import { spawn } from "node:child_process";
import { cpSync, existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sessionStream } from "../../src/builders/stop-gate/hook-input.js";
import { mcpPlanStream } from "../../src/mcp/evidence.js";
import { loadTask } from "../../src/runner/task-source/load-task.js";
import { PostgresEventStore } from "../../src/store/postgres/postgres-event-store.js";
import { type FreshDatabase, freshDatabase } from "../support/postgres.js";
import { addTask } from "./claude-support.js";
import { BIN, exampleDir, exampleTask, loopgate, parseStdout, removeTemps, show, tempDir } from "./cli.js";

let db: FreshDatabase;
let store: PostgresEventStore;
beforeAll(async () => {
  db = await freshDatabase();
  store = await PostgresEventStore.open(db.url);
});
afterAll(async () => {
  removeTemps();
  await store?.close();
  await db?.drop();
});

function hook(args: string[], input: string, cwd: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [BIN, "hook", ...args], { stdio: ["pipe", "pipe", "pipe"], cwd });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

const withPassword = () => {
  const u = new URL(db.url);
  u.username = u.username || "postgres";
  u.password = "s3cr3t-pw";
  return u.toString();
};

describe("commands that take --store, on PostgreSQL", () => {
  it("hook post-tool appends the session's call to the database, not to a SQLite file beside the task", async () => {
    const task = addTask();
    const cwd = tempDir();
    const post = JSON.stringify({
      session_id: "pg-sess",
      hook_event_name: "PostToolUseFailure",
      tool_name: "Bash",
      tool_input: { command: "npm test" },
      error: "Exit code 1\nfailing",
    });
    const r = await hook(["post-tool", task, "--store", db.url], post, cwd);
    expect(r.code, r.stderr).toBe(0);
    const events = await store.readStream(sessionStream("pg-sess"));
    expect(events.map((e) => e.type)).toEqual(["hook_session_bound", "agent_tool_observed"]);
    expect(existsSync(join(task, "..", ".loopgate", "events.db"))).toBe(false);
  });

  it("hook install names the URL in the hooks; a URL with a password is refused, masked, nothing written", async () => {
    const task = addTask();
    const cwd = tempDir();
    const printed = await hook(["install", task, "--store", db.url, "--dry-run"], "", cwd);
    expect(printed.code, printed.stderr).toBe(0);
    const settings = JSON.parse(printed.stdout) as {
      hooks: Record<string, { hooks: { command: string }[] }[]>;
    };
    expect(settings.hooks.Stop?.[0]?.hooks[0]?.command).toContain(`--store ${db.url}`);
    const refused = await hook(["install", task, "--store", withPassword()], "", cwd);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("loopgate hook install --store");
    expect(refused.stderr).toContain(":***@");
    expect(refused.stderr).not.toContain("s3cr3t-pw");
    expect(existsSync(join(cwd, ".claude"))).toBe(false);
  });

  it("mcp keeps the plan a client declares in the database", async () => {
    const task = addTask();
    const cwd = tempDir();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [BIN, "mcp", task, "--store", db.url, "--workspace", cwd],
      cwd,
      stderr: "pipe",
    });
    const client = new Client({ name: "test", version: "1" });
    await client.connect(transport);
    const r = await client.callTool({
      name: "todo_write",
      arguments: { items: [{ content: "Make add.js add", status: "in_progress", check: "true" }] },
    });
    expect(r.isError ?? false, JSON.stringify(r)).toBe(false);
    await client.close();
    const taskId = loadTask(task).task.id;
    const plan = await store.readStream(mcpPlanStream({ taskId }));
    expect(plan.map((e) => e.type)).toContain("todo_written");
    expect(existsSync(join(task, "..", ".loopgate", "events.db"))).toBe(false);
  });

  it("report and health read a run from the database", async () => {
    const dir = join(tempDir(), "js-slugify");
    cpSync(exampleDir("js-slugify"), dir, { recursive: true });
    const run = await loopgate(["run", join(dir, "task.yaml"), "--oracle", "--store", db.url, "--json"]);
    expect(run.code, show(run)).toBe(0);
    const runId = parseStdout<{ run_id: string }>(run).run_id;
    const report = await loopgate(["report", runId, "--store", db.url]);
    expect(report.code, show(report)).toBe(0);
    expect(report.stdout).toContain("SUCCESS");
    expect(report.stdout).toContain(runId);
    const health = await loopgate(["health", "--store", db.url, "--json"]);
    expect(health.code, show(health)).toBe(0);
  });

  it("demo refuses a Postgres store, naming the command and the masked URL, and runs nothing", async () => {
    const r = await loopgate(["demo", "--store", withPassword()]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("loopgate demo --store");
    expect(r.stderr).toContain(":***@");
    expect(r.stderr).not.toContain("s3cr3t-pw");
    expect(r.stderr).toContain("leave --store out or give a folder");
  });

  it("exp refuses a Postgres store, naming the command and the masked URL, and writes nothing", async () => {
    const dir = tempDir();
    const manifest = join(dir, "exp.yaml");
    writeFileSync(
      manifest,
      [
        "name: pg-refused",
        "seeds: 1",
        "arms:",
        "  - { id: noop, builder: { noop: true } }",
        "tasks:",
        `  - { id: slugify, task: ${exampleTask("js-slugify")} }`,
        "",
      ].join("\n"),
    );
    const r = await loopgate(["exp", "run", manifest, "--store", withPassword()]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("loopgate exp run --store");
    expect(r.stderr).toContain(":***@");
    expect(r.stderr).not.toContain("s3cr3t-pw");
    expect(r.stderr).toContain("give --store a folder");
    expect(readdirSync(dir)).toEqual(["exp.yaml"]);
  });
});
