// loopgate's MCP tools used by the real Claude Code through --mcp-config (a user's own session).
import { spawn } from "node:child_process";
import { cpSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { ModelServer } from "../../src/agent/models/model-server/server.js";
import { agentBinary } from "../support/agent-binaries.js";
import { addTask, FIX, modelServer } from "./claude-support.js";
import { BIN, removeTemps, tempDir } from "./cli.js";

const claude = agentBinary("claude");
let server: ModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(removeTemps);

function runClaude(path: string, cwd: string, home: string, url: string, args: string[]) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(path, args, {
      cwd,
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: home,
        ANTHROPIC_BASE_URL: url,
        ANTHROPIC_API_KEY: "sk-model-server-dummy-key",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 150_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

describe.skipIf("missing" in claude)("loopgate mcp through the real Claude Code", () => {
  it("Claude calls verify (blocked with the required fix), fixes, calls verify again: SUCCESS", {
    timeout: 200_000,
  }, async () => {
    if ("missing" in claude) return;
    const task = addTask();
    const work = tempDir("loopgate-mcp-claude-");
    cpSync(join(dirname(task), "repo"), work, { recursive: true });
    const home = tempDir("loopgate-mcp-home-");
    mkdirSync(join(home, ".claude"), { recursive: true });
    const store = tempDir("loopgate-mcp-store-");
    const config = {
      mcpServers: {
        loopgate: {
          command: process.execPath,
          args: [BIN, "mcp", task, "--workspace", work, "--store", store],
        },
      },
    };
    server = await modelServer([
      { text: "Checking.", tool_calls: [{ name: "mcp__loopgate__verify", args: {} }] },
      { text: "Fixing.", tool_calls: [{ name: "Bash", args: { command: FIX } }] },
      { text: "Checking again.", tool_calls: [{ name: "mcp__loopgate__verify", args: {} }] },
      { text: "Verified by loopgate." },
    ]);
    const r = await runClaude(claude.path, work, home, server.url, [
      "-p",
      "make add.js add",
      "--output-format",
      "stream-json",
      "--verbose",
      "--mcp-config",
      JSON.stringify(config),
      "--strict-mcp-config",
      "--allowedTools",
      "Bash,mcp__loopgate__verify,mcp__loopgate__goal_status,mcp__loopgate__todo_write",
    ]);
    expect(r.code, r.stderr).toBe(0);
    const steps = server.requests.filter((q) => q.kind === "step");
    const init = r.stdout.split("\n").find((l) => l.includes('"subtype":"init"')) ?? "{}";
    expect(JSON.parse(init)).toMatchObject({ mcp_servers: [{ name: "loopgate", status: "connected" }] });
    // Claude Code 2.1.328 defers MCP tools behind ToolSearch (not in the request's tools), but lists them at init.
    expect(JSON.parse(init).tools).toEqual(
      expect.arrayContaining(["mcp__loopgate__verify", "mcp__loopgate__todo_write"]),
    );
    const after = (n: number) => JSON.stringify(steps[n]?.body);
    expect(after(1)).toMatch(/Required fix/);
    expect(after(1)).not.toContain("adds negatives");
    expect(after(3)).toMatch(/SUCCESS \(run /);
    expect(server.exhausted).toBeUndefined();
  });
});

describe.runIf("missing" in claude)("loopgate mcp through the real Claude Code", () => {
  const why = "missing" in claude ? claude.missing : "";
  if (why) console.info(`skipped: ${why}`);
  // Runs only when the pinned binary is missing (npm ci installs it; .ci/run makes sure): the real-agent
  // tests above cannot run without it, and this placeholder names why in the report instead of passing.
  it.skip(`skipped: ${why}`, () => {});
});
