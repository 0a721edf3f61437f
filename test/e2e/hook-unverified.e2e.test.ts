// A user's own Claude Code (the real binary, against the scripted anthropic server) with loopgate's hooks
// installed in the project by `loopgate hook install`. An agent that blanks .claude/settings.json through
// Bash makes Claude Code reload its settings and stop with no Stop hook: claude exits 0, nothing verified
// the work. (Claude Code's own permission check refuses a shell redirect into that file, `printf '{}' >
// .claude/settings.json`; a write by another program it starts, here `node -e`, goes through.) `loopgate runs` and `status` must show that session as unverified, with a `loopgate verify`
// that runs as printed; a session whose Stop loopgate verified must not be listed as unverified.
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { ModelServer } from "../../src/agent/models/model-server/server.js";
import { agentBinary } from "../support/agent-binaries.js";
import { addTask, FIX, modelServer } from "./claude-support.js";
import { loopgate, parseStdout, ROOT, removeTemps, show, tempDir } from "./cli.js";

const claude = agentBinary("claude");
let server: ModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(removeTemps);

/** `claude -p` in the project, with a private HOME (no user settings) and the scripted server. */
function runClaude(path: string, cwd: string, home: string, url: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(
      path,
      ["-p", "make add.js add", "--output-format", "stream-json", "--verbose", "--allowedTools", "Bash"],
      {
        cwd,
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          HOME: home,
          ANTHROPIC_BASE_URL: url,
          ANTHROPIC_API_KEY: "sk-model-server-dummy-key",
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 200_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** A pasted hint, run by a shell in the folder the listing was printed in (the CLI helper's cwd). */
function paste(line: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn("sh", ["-c", line], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** A project holding the task's starting files, its hooks installed by `loopgate hook install`. */
async function project() {
  const task = addTask();
  const work = tempDir("loopgate-unverified-work-");
  cpSync(join(dirname(task), "repo"), work, { recursive: true });
  const home = tempDir("loopgate-unverified-home-");
  mkdirSync(join(home, ".claude"), { recursive: true });
  const store = tempDir("loopgate-unverified-store-");
  const installed = await loopgate(["hook", "install", task, "--project", "--store", store], {
    cwd: work,
    env: { HOME: home },
  });
  expect(installed.code, show(installed)).toBe(0);
  return { task, work, home, store, installed };
}

interface Row {
  kind?: string;
  run_id?: string | null;
  status?: string;
  session_id?: string;
  state?: string;
  tool_calls?: number;
  task_file?: string | null;
  cwd?: string | null;
  last_verification?: { status: string; run_id: string } | null;
  hint?: string | null;
}

async function listing(store: string) {
  const r = await loopgate(["runs", "--store", store, "--json"]);
  expect(r.code, show(r)).toBe(0);
  const rows = parseStdout<Row[]>(r);
  return {
    runs: rows.filter((x) => x.kind === undefined),
    sessions: rows.filter((x) => x.kind === "hook-session"),
  };
}

describe.skipIf("missing" in claude)("hook sessions loopgate never verified are visible", () => {
  it("an agent that blanks .claude/settings.json ends with no Stop verified: runs and status say unverified, and the verify hint runs", {
    timeout: 400_000,
  }, async () => {
    if ("missing" in claude) return;
    const { task, work, home, store, installed } = await project();
    // hook install says it plainly: the agent can switch the hooks off, how to lock them, runs shows it.
    expect(installed.stderr).toMatch(/can switch these hooks off/);
    expect(installed.stderr).toContain("/etc/claude-code/managed-settings.json");
    expect(installed.stderr).toMatch(/runs lists every session whose end loopgate never verified/);
    server = await modelServer([
      { text: "Looking.", tool_calls: [{ name: "Bash", args: { command: "ls" } }] },
      {
        text: "Tidying.",
        tool_calls: [
          {
            name: "Bash",
            // Claude Code notices the change a moment later: the command waits for that, as an agent that
            // goes on working would, so the session's end comes after the reload whatever the load.
            args: {
              command: "node -e \"require('fs').writeFileSync('.claude/settings.json','{}')\"; sleep 8",
            },
          },
        ],
      },
      { text: "Done." },
    ]);
    const t0 = performance.now();
    const r = await runClaude(claude.path, work, home, server.url);
    console.log(`claude with blanked settings: ${Math.round(performance.now() - t0)} ms`);
    expect(r.code, `${r.stderr}\n${r.stdout.slice(-4000)}`).toBe(0);
    expect(readFileSync(join(work, ".claude", "settings.json"), "utf8")).toBe("{}");
    // No Stop hook ran: no Stop feedback went back to the model, no run, no Stop state.
    expect(server.requests.length).toBe(3);
    expect(server.exhausted).toBeUndefined();
    expect(existsSync(join(store, "claude-sessions"))).toBe(false);

    const { runs, sessions } = await listing(store);
    expect(runs).toEqual([]);
    expect(sessions).toHaveLength(1);
    const s = sessions[0] as Row;
    expect(s.state).toBe("unverified");
    // `ls` was recorded; the blanking call's own PostToolUse may or may not have run before the reload.
    expect(s.tool_calls).toBeGreaterThanOrEqual(1);
    expect(s.last_verification).toBeNull();
    expect(s.task_file).toBe(task);
    expect(s.cwd).toBe(work);
    const id = s.session_id as string;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);

    const text = await loopgate(["runs", "--store", store]);
    expect(text.code, show(text)).toBe(0);
    expect(text.stdout).toMatch(
      new RegExp(`${id}\\s+unverified\\s+claude-add\\s+${s.tool_calls} tool call\\(s\\), no Stop verified`),
    );
    const hint = /^ {2}verify it: (.+)$/m.exec(text.stdout)?.[1];
    expect(hint, text.stdout).toBeDefined();
    expect(hint).toBe(s.hint);

    for (const arg of [id, `claude-session-${id}`]) {
      const st = await loopgate(["status", arg, "--store", store]);
      expect(st.code, show(st)).toBe(3);
      expect(st.stdout).toMatch(/^UNVERIFIED · hook session /);
      expect(st.stdout).toContain(`verify it: ${hint}`);
      const ev = await loopgate(["events", arg, "--store", store, "--json"]);
      expect(ev.code, show(ev)).toBe(0);
      const types = ev.stdout
        .trim()
        .split("\n")
        .map((l) => (JSON.parse(l) as { type: string }).type);
      expect(types.filter((t) => t === "agent_tool_observed")).toHaveLength(s.tool_calls as number);
      expect(types).not.toContain("hook_stop_verified");
    }
    const sj = await loopgate(["status", id, "--store", store, "--json"]);
    expect(parseStdout<Row>(sj).state).toBe("unverified");

    // The hint, pasted, runs verify on the session's folder: add.js still subtracts, so ESCALATED.
    const pasted = await paste(hint as string);
    expect(pasted.code, `${pasted.stdout}\n${pasted.stderr}`).toBe(1);
    expect(pasted.stdout).toMatch(/^ESCALATED · run /m);
    const after = await listing(store);
    expect(after.runs.map((x) => x.status)).toEqual(["ESCALATED"]);
  });

  it("a session whose Stop loopgate verified is listed as verified with its verdict, not as unverified", {
    timeout: 400_000,
  }, async () => {
    if ("missing" in claude) return;
    const { work, home, store } = await project();
    server = await modelServer([
      { text: "Fixing.", tool_calls: [{ name: "Bash", args: { command: FIX } }] },
      { text: "Done." },
    ]);
    const t0 = performance.now();
    const r = await runClaude(claude.path, work, home, server.url);
    console.log(`claude with a verified Stop: ${Math.round(performance.now() - t0)} ms`);
    expect(r.code, `${r.stderr}\n${r.stdout.slice(-4000)}`).toBe(0);
    const { runs, sessions } = await listing(store);
    expect(runs.map((x) => x.status)).toEqual(["SUCCESS"]);
    expect(sessions).toHaveLength(1);
    const s = sessions[0] as Row;
    expect(s.state).toBe("verified");
    expect(s.last_verification).toEqual(
      expect.objectContaining({ status: "SUCCESS", run_id: runs[0]?.run_id }),
    );
    expect(s.hint).toBeNull();
    const text = await loopgate(["runs", "--store", store]);
    expect(text.stdout).toMatch(/0 unverified/);
    expect(text.stdout).not.toMatch(/unverified {3}/);
    expect(text.stdout).not.toContain("verify it:");
    const st = await loopgate(["status", s.session_id as string, "--store", store]);
    expect(st.code, show(st)).toBe(0);
    expect(st.stdout).toMatch(/^VERIFIED · hook session /);
  });
});
