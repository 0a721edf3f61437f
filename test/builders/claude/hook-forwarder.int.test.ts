// The generated forwarder, run by the real node over the hook server's Unix socket: it relays loopgate's
// answer, fails closed on a Stop, and no one but the socket's owner (and root) can reach loopgate through it.
import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { freshHookDir, writeHookFiles } from "../../../src/builders/claude/claude-settings.js";
import { FORWARDER_SCRIPT } from "../../../src/builders/claude/hook-forwarder.js";
import { HOOK_SOCKET, startHookServer } from "../../../src/builders/claude/hook-server.js";

const root = mkdtempSync(join(tmpdir(), "lg-forwarder-"));
// Open to every user: the forwarder script and node must be reachable by the other uids below.
chmodSync(root, 0o755);
const script = join(root, "loopgate-hook.mjs");
writeFileSync(script, FORWARDER_SCRIPT, { mode: 0o444 });
afterAll(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
/** A fresh folder for a socket, 0700 like the run folder's hook folders until a test opens it. */
const socketDir = () => freshHookDir(join(root, `s${++n}`));

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

const ok = async () => ({ exit_code: 0, stdout: "", stderr: "" });

/** Runs the forwarder (as `uid` through setpriv when given) with the hook's stdin. */
function forward(socket: string, input: string, o: { deadline?: number; uid?: number } = {}) {
  const argv = [process.execPath, script, socket, String(o.deadline ?? 20)];
  const [cmd, ...args] =
    o.uid === undefined
      ? argv
      : ["setpriv", `--reuid=${o.uid}`, `--regid=${o.uid}`, "--clear-groups", "--", ...argv];
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(cmd ?? "", args, { stdio: ["pipe", "pipe", "pipe"], cwd: "/" });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

const isRoot = process.geteuid?.() === 0;

describe("hook forwarder over the hook socket", { timeout: 60_000 }, () => {
  it("relays loopgate's exit code, stdout and stderr", async () => {
    const s = await startHookServer(
      async (i) => ({ exit_code: 2, stdout: "", stderr: `blocked ${i.hook_event_name}` }),
      {
        dir: socketDir(),
        owner: null,
      },
    );
    const r = await forward(s.socket, STOP);
    await s.close();
    expect(r).toEqual({ code: 2, stdout: "", stderr: "blocked Stop" });
  });

  it("a socket path longer than a socket address holds (107 bytes) still works", async () => {
    const dir = freshHookDir(join(root, "d".repeat(60), "e".repeat(60)));
    const s = await startHookServer(async () => ({ exit_code: 0, stdout: "relayed", stderr: "" }), {
      dir,
      owner: null,
    });
    expect(Buffer.byteLength(s.socket)).toBeGreaterThan(107);
    const r = await forward(s.socket, STOP);
    await s.close();
    expect(r).toEqual({ code: 0, stdout: "relayed", stderr: "" });
  });

  it("a Stop that cannot reach loopgate is blocked (exit 2), never let through", async () => {
    const s = await startHookServer(ok, { dir: socketDir(), owner: null });
    await s.close();
    const r = await forward(s.socket, STOP);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cannot reach loopgate/);
  });

  it("a Stop whose handler throws is blocked with the reason", async () => {
    const s = await startHookServer(
      async () => {
        throw new Error("the store is locked");
      },
      { dir: socketDir(), owner: null },
    );
    const r = await forward(s.socket, STOP);
    await s.close();
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/the store is locked/);
  });

  it("a Stop not answered before the deadline is blocked", async () => {
    const socket = join(socketDir(), HOOK_SOCKET);
    const silent = createServer(() => {});
    await new Promise<void>((r) => silent.listen(socket, () => r()));
    const r = await forward(socket, STOP, { deadline: 1 });
    silent.close();
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no answer within 1 s/);
  });

  it("a tool report that cannot be delivered is a non-blocking error (exit 1), said on stderr", async () => {
    const s = await startHookServer(ok, { dir: socketDir(), owner: null });
    await s.close();
    const r = await forward(s.socket, POST);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/could not record/);
  });

  it("a TaskCompleted that cannot reach loopgate is refused (exit 2), so the task is not marked completed", async () => {
    const s = await startHookServer(ok, { dir: socketDir(), owner: null });
    await s.close();
    const done = JSON.stringify({ session_id: "s", hook_event_name: "TaskCompleted", task_id: "1" });
    const r = await forward(s.socket, done);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cannot reach loopgate/);
  });

  it("the socket is 0600; the hook command and settings hold no credential, only public paths and the deadline", async () => {
    const dir = socketDir();
    const s = await startHookServer(ok, { dir, owner: null });
    const files = writeHookFiles(dir, { node: "/usr/bin/node", socket: s.socket, deadlineSeconds: 200 });
    expect(statSync(s.socket).mode & 0o777).toBe(0o600);
    const settings = JSON.parse(readFileSync(files.settingsFile, "utf8")) as {
      hooks: Record<string, { hooks: { command: string }[] }[]>;
    };
    const commands = new Set(
      Object.values(settings.hooks).flatMap((g) => g.flatMap((e) => e.hooks.map((h) => h.command))),
    );
    expect([...commands]).toEqual([`/usr/bin/node ${files.forwarder} ${s.socket} 200`]);
    // The settings file says nothing else: every string in it is a hook key, a matcher or that command.
    const strings = JSON.stringify(settings).match(/"[^"]*"/g) ?? [];
    for (const q of strings)
      expect([
        "hooks",
        "Stop",
        "PostToolUse",
        "PostToolUseFailure",
        "TaskCompleted",
        "matcher",
        "*",
        "type",
        "command",
        "timeout",
      ]).toContain(q === JSON.stringify([...commands][0]) ? "command" : JSON.parse(q));
    await s.close();
    chmodSync(dir, 0o755);
  });
});

describe.skipIf(!isRoot)("who can reach the hook socket (as root: other uids)", { timeout: 60_000 }, () => {
  const SANDBOX = { uid: 65534, gid: 65534 };
  const OTHER = 65533;

  it("in the run folder's layout (a 0700 folder around it), no other uid reaches it, not even the socket's owner from the host", async () => {
    const closed = join(root, "run");
    mkdirSync(closed, { mode: 0o700 });
    const s = await startHookServer(ok, { dir: freshHookDir(join(closed, "claude-hooks")), owner: SANDBOX });
    chmodSync(join(closed, "claude-hooks"), 0o555);
    const other = await forward(s.socket, STOP, { uid: OTHER });
    const owner = await forward(s.socket, STOP, { uid: SANDBOX.uid });
    const self = await forward(s.socket, STOP);
    await s.close();
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/EACCES|permission denied/i);
    expect(owner.code).toBe(2);
    expect(owner.stderr).toMatch(/EACCES|permission denied/i);
    expect(self.code).toBe(0);
  });

  it("the socket itself admits its owner (the sandbox user) and refuses another uid, even in an open folder", async () => {
    const dir = socketDir();
    chmodSync(dir, 0o755);
    let handled = 0;
    const s = await startHookServer(
      async () => {
        handled += 1;
        return { exit_code: 0, stdout: "", stderr: "" };
      },
      { dir, owner: SANDBOX },
    );
    expect(statSync(s.socket).uid).toBe(SANDBOX.uid);
    const other = await forward(s.socket, STOP, { uid: OTHER });
    const owner = await forward(s.socket, STOP, { uid: SANDBOX.uid });
    await s.close();
    expect(other.code).toBe(2);
    expect(other.stderr).toMatch(/EACCES|permission denied/i);
    expect(owner).toEqual({ code: 0, stdout: "", stderr: "" });
    expect(handled).toBe(1);
  });
});
