// The generated forwarder, run by the real node: it relays loopgate's answer and fails closed on a Stop.
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { FORWARDER_SCRIPT } from "../../../src/builders/claude/hook-forwarder.js";
import { startHookServer } from "../../../src/builders/claude/hook-server.js";

const dir = mkdtempSync(join(tmpdir(), "lg-forwarder-"));
const script = join(dir, "loopgate-hook.mjs");
writeFileSync(script, FORWARDER_SCRIPT);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const STOP = JSON.stringify({
  session_id: "s",
  hook_event_name: "Stop",
  stop_hook_active: false,
  last_assistant_message: "done",
});
const POST = JSON.stringify({
  session_id: "s",
  hook_event_name: "PostToolUse",
  tool_name: "Bash",
  tool_input: { command: "ls" },
  tool_response: { stdout: "" },
});

function forward(url: string, token: string, input: string, deadline = 20) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [script, url, token, String(deadline)], {
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

describe("hook forwarder", { timeout: 60_000 }, () => {
  it("relays loopgate's exit code, stdout and stderr", async () => {
    const s = await startHookServer(async (i) => ({
      exit_code: 2,
      stdout: "",
      stderr: `blocked ${i.hook_event_name}`,
    }));
    const r = await forward(s.url, s.token, STOP);
    await s.close();
    expect(r).toEqual({ code: 2, stdout: "", stderr: "blocked Stop" });
  });

  it("a Stop that cannot reach loopgate is blocked (exit 2), never let through", async () => {
    const s = await startHookServer(async () => ({ exit_code: 0, stdout: "", stderr: "" }));
    await s.close();
    const r = await forward(s.url, s.token, STOP);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cannot reach loopgate/);
  });

  it("a Stop whose handler throws is blocked with the reason", async () => {
    const s = await startHookServer(async () => {
      throw new Error("the store is locked");
    });
    const r = await forward(s.url, s.token, STOP);
    await s.close();
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/the store is locked/);
  });

  it("a wrong token is refused, and the Stop blocked", async () => {
    const s = await startHookServer(async () => ({ exit_code: 0, stdout: "", stderr: "" }));
    const r = await forward(s.url, "not-the-token", STOP);
    await s.close();
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/401/);
  });

  it("a Stop not answered before the deadline is blocked", async () => {
    const silent = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", () => r()));
    const port = (silent.address() as { port: number }).port;
    const r = await forward(`http://127.0.0.1:${port}/hook`, "t", STOP, 1);
    silent.closeAllConnections();
    silent.close();
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no answer within 1 s/);
  });

  it("a tool report that cannot be delivered is a non-blocking error (exit 1), said on stderr", async () => {
    const s = await startHookServer(async () => ({ exit_code: 0, stdout: "", stderr: "" }));
    await s.close();
    const r = await forward(s.url, s.token, POST);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/could not record/);
  });

  it("a TaskCompleted that cannot reach loopgate is refused (exit 2), so the task is not marked completed", async () => {
    const s = await startHookServer(async () => ({ exit_code: 0, stdout: "", stderr: "" }));
    await s.close();
    const done = JSON.stringify({ session_id: "s", hook_event_name: "TaskCompleted", task_id: "1" });
    const r = await forward(s.url, s.token, done);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cannot reach loopgate/);
  });
});
