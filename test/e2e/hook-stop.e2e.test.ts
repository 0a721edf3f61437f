// `loopgate hook stop TASK` as a user's own Claude Code runs it: Stop JSON on stdin, exit 0 or 2.
import { spawn } from "node:child_process";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { addTask } from "./claude-support.js";
import { BIN, loopgate, removeTemps, show, tempDir } from "./cli.js";

afterAll(removeTemps);

function hook(args: string[], input: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [BIN, "hook", ...args], { stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

const stop = (cwd: string, active: boolean) =>
  JSON.stringify({
    session_id: "sess-1",
    hook_event_name: "Stop",
    cwd,
    stop_hook_active: active,
    last_assistant_message: "done",
  });

describe("loopgate hook stop (a user's own session)", { timeout: 200_000 }, () => {
  it("blocks with the required fix while the held-out gate fails, until loopgate's cap, then lets go as ESCALATED", async () => {
    const task = addTask({ attempts: 3 });
    const work = tempDir("loopgate-hook-work-");
    cpSync(join(dirname(task), "repo"), work, { recursive: true });
    const store = tempDir("loopgate-hook-store-");
    const first = await hook(["stop", task, "--store", store], stop(work, false));
    expect(first.code, first.stderr).toBe(2);
    expect(first.stderr).toMatch(/Required fix/);
    expect(first.stderr).toMatch(/heldout/);
    expect(first.stderr).not.toContain("adds negatives");
    expect((await hook(["stop", task, "--store", store], stop(work, true))).code).toBe(2);
    const third = await hook(["stop", task, "--store", store], stop(work, true));
    expect(third.code, third.stderr).toBe(0);
    expect(JSON.parse(third.stdout).systemMessage).toMatch(/ESCALATED.*NOT verified/);
    // Each Stop is a recorded run, and a verification in the session's stream: the session's last Stop
    // was verified (ESCALATED), so it is not listed as unverified.
    const runs = await loopgate(["runs", "--store", store, "--json"]);
    expect(runs.code, show(runs)).toBe(0);
    const rows = JSON.parse(runs.stdout) as { kind?: string; run_id?: string }[];
    const runRows = rows.filter((r) => r.kind === undefined);
    expect(runRows.length).toBe(3);
    const sessions = rows.filter((r) => r.kind === "hook-session") as unknown as {
      session_id: string;
      state: string;
      verifications: number;
      last_verification: { status: string; run_id: string; decision: string };
      task_file: string;
      cwd: string;
    }[];
    expect(sessions.length).toBe(1);
    expect(sessions[0]).toMatchObject({
      session_id: "sess-1",
      state: "verified",
      verifications: 3,
      task_file: task,
      cwd: work,
    });
    expect(sessions[0]?.last_verification).toMatchObject({ status: "ESCALATED", decision: "allow" });
    expect(runRows.map((r) => r.run_id)).toContain(sessions[0]?.last_verification.run_id);
    const ev = await loopgate(["events", "sess-1", "--store", store, "--json"]);
    expect(ev.code, show(ev)).toBe(0);
    const decisions = ev.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; data: { decision?: string } })
      .filter((e) => e.type === "hook_stop_verified")
      .map((e) => e.data.decision);
    expect(decisions).toEqual(["block", "block", "allow"]);
  });

  it("lets Claude stop once the gate passes on the session's folder", async () => {
    const task = addTask();
    const work = tempDir("loopgate-hook-work-");
    cpSync(join(dirname(task), "repo"), work, { recursive: true });
    writeFileSync(join(work, "add.js"), "module.exports = (a, b) => a + b;\n");
    const r = await hook(["stop", task, "--store", tempDir()], stop(work, false));
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).systemMessage).toMatch(/SUCCESS/);
  });

  it("a store it cannot open, or bad stdin, blocks (exit 2) with the reason", async () => {
    const task = addTask();
    const notADir = join(tempDir(), "file");
    writeFileSync(notADir, "x");
    const r = await hook(["stop", task, "--store", notADir], stop(dirname(task), false));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/could not check your work/);
    const bad = await hook(["stop", task], "{not json");
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/not JSON/);
  });

  it("post-tool records the call in the session's stream; install --dry-run prints the hooks", async () => {
    const task = addTask();
    const store = tempDir();
    const post = JSON.stringify({
      session_id: "sess-2",
      hook_event_name: "PostToolUseFailure",
      tool_name: "Bash",
      tool_input: { command: "npm test" },
      error: "Exit code 1\nfailing",
    });
    const r = await hook(["post-tool", task, "--store", store], post);
    expect(r.code, r.stderr).toBe(0);
    // A tool call and no verified Stop: the session is listed as unverified, with the verify to run.
    const listed = await loopgate(["runs", "--store", store, "--json"]);
    expect(listed.code, show(listed)).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({
        kind: "hook-session",
        session_id: "sess-2",
        state: "unverified",
        tool_calls: 1,
      }),
    ]);
    const status = await loopgate(["status", "sess-2", "--store", store]);
    expect(status.code, show(status)).toBe(3);
    expect(status.stdout).toContain(`verify ${task} --workspace `);
    const managed = await hook(["install", task, "--store", store, "--managed"], "");
    expect(managed.code, managed.stderr).toBe(0);
    expect(Object.keys((JSON.parse(managed.stdout) as { hooks: object }).hooks)).toEqual([
      "Stop",
      "PostToolUse",
      "PostToolUseFailure",
      "TaskCompleted",
    ]);
    expect(managed.stderr).toContain("/etc/claude-code/managed-settings.json");
    const both = await hook(["install", task, "--store", store, "--managed", "--project"], "");
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/--managed prints the hooks .* leave out --project/);
    expect(both.stdout).toBe("");
    const printed = await hook(["install", task, "--store", store, "--dry-run"], "");
    expect(printed.code, printed.stderr).toBe(0);
    const settings = JSON.parse(printed.stdout) as {
      hooks: Record<string, { hooks: { command: string }[] }[]>;
    };
    expect(settings.hooks.Stop?.[0]?.hooks[0]?.command).toContain(" hook stop ");
    expect(settings.hooks.PostToolUseFailure?.[0]?.hooks[0]?.command).toContain(" hook post-tool ");
    expect(readFileSync(join(store, "events.db")).length).toBeGreaterThan(0);
  });
});
