// The real Claude Code with loopgate's PostToolUse hook (`loopgate hook post-tool`) and `loopgate mcp`
// (--mcp-config): a self-check citing a call no hook recorded is refused; citing the Bash call Claude
// really ran, by its tool_use_id, as it was recorded, is accepted.
import { spawn } from "node:child_process";
import { cpSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { ModelServer } from "../../src/agent/models/model-server/server.js";
import { installSettings } from "../../src/cli/commands/hook/hook.js";
import { agentBinary } from "../support/agent-binaries.js";
import { addTask, FIX, modelServer } from "./claude-support.js";
import { BIN, removeTemps, tempDir } from "./cli.js";

const claude = agentBinary("claude");
if ("missing" in claude)
  console.log(`skipping the real Claude Code self-check evidence test: ${claude.missing}`);
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

const hygiene = {
  sandboxRoot: "/tmp/loopgate-self-check",
  strategy: "scratch_dir",
  outputPolicy: "scratch_only",
  scratchUsed: false,
  cleanupRan: true,
  workspaceSideEffects: "none",
};
const cite = (toolCallId: string) => ({
  status: "pass",
  publicReason: "add.js was rewritten to add",
  commandEvidence: [{ toolCallId, command: FIX, exitCode: 0 }],
  executionHygiene: hygiene,
});

describe.skipIf("missing" in claude)("loopgate mcp self_check_submit through the real Claude Code", () => {
  it("a cited call no hook recorded is refused; the real call, by its tool_use_id, is accepted", {
    timeout: 200_000,
  }, async () => {
    if ("missing" in claude) return;
    const task = addTask();
    const work = tempDir("loopgate-mcp-ev-claude-");
    cpSync(join(dirname(task), "repo"), work, { recursive: true });
    const home = tempDir("loopgate-mcp-ev-home-");
    mkdirSync(join(home, ".claude"), { recursive: true });
    const store = tempDir("loopgate-mcp-ev-store-");
    // Only the tool-call hooks: this test is about evidence, not the Stop gate.
    const { PostToolUse, PostToolUseFailure } = installSettings(task, store, BIN);
    const settings = join(tempDir("loopgate-mcp-ev-settings-"), "settings.json");
    writeFileSync(settings, JSON.stringify({ hooks: { PostToolUse, PostToolUseFailure } }));
    const config = {
      mcpServers: {
        loopgate: {
          command: process.execPath,
          args: [BIN, "mcp", task, "--workspace", work, "--store", store],
        },
      },
    };
    server = await modelServer([
      { text: "Fixing.", tool_calls: [{ name: "Bash", args: { command: FIX } }] },
      {
        text: "Planning my self-check.",
        tool_calls: [
          {
            name: "mcp__loopgate__self_check_plan_submit",
            args: {
              finalArtifacts: [{ path: "add.js", purpose: "the sum", publicReason: "the task names it" }],
              selfCheckScratch: { paths: ["/tmp/loopgate-self-check"], cleanup: true },
              workspaceGuardPlan: {},
            },
          },
        ],
      },
      {
        text: "Submitting.",
        tool_calls: [{ name: "mcp__loopgate__self_check_submit", args: cite("toolu_made_up") }],
      },
      {
        text: "Citing the real call.",
        tool_calls: [{ name: "mcp__loopgate__self_check_submit", args: cite("toolu_1_0") }],
      },
      { text: "Done." },
    ]);
    const r = await runClaude(claude.path, work, home, server.url, [
      "-p",
      "make add.js add",
      "--output-format",
      "stream-json",
      "--verbose",
      "--settings",
      settings,
      "--setting-sources",
      "user",
      "--mcp-config",
      JSON.stringify(config),
      "--strict-mcp-config",
      "--allowedTools",
      "Bash,mcp__loopgate__self_check_plan_submit,mcp__loopgate__self_check_submit",
    ]);
    expect(r.code, r.stderr).toBe(0);
    const last = (step: number) => {
      const body = server?.requests.find((q) => q.kind === "step" && q.step === step)?.body as
        | { messages?: unknown[] }
        | undefined;
      return JSON.stringify(body?.messages?.at(-1) ?? null);
    };
    expect(last(3)).toMatch(/self-check plan recorded/);
    expect(last(4)).toContain("self-check refused");
    expect(last(4)).toContain("evidence_unknown_call: no recorded tool call toolu_made_up");
    expect(last(5)).toContain("its evidence matches loopgate's records");
    expect(server.exhausted).toBeUndefined();
  });
});
