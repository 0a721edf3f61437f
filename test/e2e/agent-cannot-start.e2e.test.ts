// An agent binary that cannot be started (missing, not executable) ends `loopgate claude` and
// `loopgate run --agent codex` at once as TOOL_FAILURE (exit 2: a builder that cannot start, docs/explanation/sandbox.md), with
// a reason naming the binary and how to install it; no attempt is spent. Needs no real agent binary.
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { addTask } from "./claude-support.js";
import { loopgate, parseStdout, removeTemps, show, tempDir } from "./cli.js";

afterAll(removeTemps);

interface Env {
  status: string;
  reason: string;
  attempts: number;
}

function notExecutable(): string {
  const file = join(tempDir("loopgate-noexec-"), "agent");
  writeFileSync(file, "#!/bin/sh\necho never\n");
  chmodSync(file, 0o644);
  return file;
}

describe("an agent binary that cannot be started", () => {
  it("loopgate claude with a claude that is not executable: TOOL_FAILURE naming it and the install", async () => {
    const bin = notExecutable();
    const r = await loopgate(["claude", addTask(), "--json", "--store", tempDir("loopgate-store-")], {
      env: { LOOPGATE_CLAUDE_BIN: bin },
    });
    expect(r.code, show(r)).toBe(2);
    const env = parseStdout<Env>(r);
    expect(env.status).toBe("TOOL_FAILURE");
    expect(env.attempts).toBe(0);
    expect(env.reason).toContain(`Claude Code cannot be started: ${bin} is not executable`);
    expect(env.reason).toContain("npm install @anthropic-ai/claude-code@2.1.328");
  });

  it("loopgate claude with a LOOPGATE_CLAUDE_BIN that does not exist: TOOL_FAILURE naming it", async () => {
    const bin = join(tempDir("loopgate-nobin-"), "claude");
    const r = await loopgate(["claude", addTask(), "--json", "--store", tempDir("loopgate-store-")], {
      env: { LOOPGATE_CLAUDE_BIN: bin },
    });
    expect(r.code, show(r)).toBe(2);
    const env = parseStdout<Env>(r);
    expect(env.status).toBe("TOOL_FAILURE");
    expect(env.reason).toContain(`Claude Code cannot be started: ${bin} does not exist`);
    expect(env.reason).toContain("LOOPGATE_CLAUDE_BIN");
  });

  it("run --agent codex with a codex that is not executable: TOOL_FAILURE naming it and the install", async () => {
    const bin = notExecutable();
    const r = await loopgate(
      [
        "run",
        addTask(),
        "--agent",
        "codex:scripted",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--json",
        "--store",
        tempDir("loopgate-store-"),
      ],
      { env: { LOOPGATE_CODEX_BIN: bin } },
    );
    expect(r.code, show(r)).toBe(2);
    const env = parseStdout<Env>(r);
    expect(env.status).toBe("TOOL_FAILURE");
    expect(env.attempts).toBe(0);
    expect(env.reason).toContain(`codex cannot be started: ${bin} is not executable`);
    expect(env.reason).toContain("npm install @openai/codex@0.169.0");
  });
});
