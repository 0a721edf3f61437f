// Ctrl-C during `loopgate run --agent codex` while the real Codex is inside a long command: the interrupt
// reaches the agent (SIGTERM to its process group, SIGKILL after a short grace), the run is TOOL_FAILURE
// "interrupted (SIGINT)" in seconds, nothing of the run is left running, and the model hears nothing more.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { type ModelServer, startModelServer } from "../../src/agent/models/model-server/server.js";
import { ScriptedResponseSchema } from "../../src/agent/models/script-file.js";
import { agentBinary } from "../support/agent-binaries.js";
import { exited, startDetached, untilMarker, untilNoneLeft } from "./agent-interrupt-support.js";
import { loopgate, parseStdout, removeTemps, show, tempDir } from "./cli.js";

const codex = agentBinary("codex");
let server: ModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(removeTemps);

/** A task whose gate checks greeting.txt; the workspace is a one-file repo. */
function task(): string {
  const dir = tempDir("loopgate-codex-int-");
  mkdirSync(join(dir, "repo"));
  writeFileSync(join(dir, "repo", "greeting.txt"), "hello\n");
  writeFileSync(
    join(dir, "task.yaml"),
    [
      "id: codex-interrupt",
      "prompt: Make greeting.txt say bye.",
      "workspace: ./repo",
      "gates:",
      "  - id: says-bye",
      '    static: { path: greeting.txt, match: "^bye$" }',
      "budget: { attempts: 2 }",
      "",
    ].join("\n"),
  );
  return dir;
}

describe.skipIf("missing" in codex)("Ctrl-C during loopgate run --agent codex (real codex)", () => {
  it("mid tool call (sleep 300): TOOL_FAILURE interrupted (SIGINT), exit 2, no process left, no model request after", {
    timeout: 300_000,
  }, async () => {
    const marker = `lg-interrupt-${process.pid}-${Date.now()}`;
    server = await startModelServer({
      protocol: "openai-responses",
      script: [
        { tool_calls: [{ name: "exec_command", args: { cmd: `touch started && sleep 300 # ${marker}` } }] },
        // What a resume gets: a new codex exec fixes it.
        { tool_calls: [{ name: "exec_command", args: { cmd: "printf 'bye\\n' > greeting.txt" } }] },
        { text: "greeting.txt says bye." },
      ].map((r) => ScriptedResponseSchema.parse(r)),
    });
    const dir = task();
    const store = join(dir, ".loopgate");
    const s = startDetached(
      [
        "run",
        join(dir, "task.yaml"),
        "--agent",
        "codex:scripted",
        "--base-url",
        `${server.url}/v1`,
        "--json",
        "--store",
        store,
      ],
      {},
      dir,
    );
    const runDir = await untilMarker(store, "started", s);
    const seen = server.requests.length;
    const sent = Date.now();
    process.kill(-(s.child.pid as number), "SIGINT");
    const code = await exited(s.child);
    const seconds = (Date.now() - sent) / 1000;
    console.log(`loopgate run --agent codex: SIGINT mid tool call → exit ${code} in ${seconds.toFixed(1)} s`);
    expect(seconds, s.out.stderr).toBeLessThan(30);
    expect(code, s.out.stderr).toBe(2);
    const left = await untilNoneLeft([marker, runDir], join(runDir, "workspace"), 3_000);
    expect(left, "processes of the run still alive").toEqual([]);
    expect(server.requests.length).toBe(seen);
    const env = parseStdout<{ run_id: string; status: string; reason: string }>({
      code,
      signal: null,
      ...s.out,
    });
    expect(env.status).toBe("TOOL_FAILURE");
    expect(env.reason).toContain("interrupted (SIGINT)");
    const r = await loopgate(["events", env.run_id, "--store", store, "--json"]);
    expect(r.code, show(r)).toBe(0);
    const events = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown> });
    expect(events.map((e) => e.type)).not.toContain("gate_run_finished");
    expect(events.find((e) => e.type === "infrastructure_failed")?.data.interrupted).toBe(true);
    // Codex's session was ended by loopgate: that is no failed session of its own.
    const session = events.find((e) => e.type === "agent_session_finished");
    expect(session?.data.is_error).toBe(false);
    // A Codex run can be resumed: a new codex exec, from the rolled-back workspace, to its verdict.
    const resumed = await loopgate(["resume", env.run_id, "--store", store, "--json"], {
      cwd: dir,
      timeoutMs: 200_000,
    });
    expect(resumed.code, show(resumed)).toBe(0);
    expect(parseStdout<{ status: string }>(resumed).status).toBe("SUCCESS");
  });

  it("an honest SUCCESS is no error session: agent_session_finished has is_error false", {
    timeout: 300_000,
  }, async () => {
    server = await startModelServer({
      protocol: "openai-responses",
      script: [
        { tool_calls: [{ name: "exec_command", args: { cmd: "printf 'bye\\n' > greeting.txt" } }] },
        { text: "greeting.txt says bye." },
      ].map((r) => ScriptedResponseSchema.parse(r)),
    });
    const dir = task();
    const store = join(dir, ".loopgate");
    const r = await loopgate(
      [
        "run",
        join(dir, "task.yaml"),
        "--agent",
        "codex:scripted",
        "--base-url",
        `${server.url}/v1`,
        "--json",
        "--store",
        store,
      ],
      { cwd: dir, timeoutMs: 200_000 },
    );
    expect(r.code, show(r)).toBe(0);
    const env = parseStdout<{ run_id: string; status: string }>(r);
    expect(env.status).toBe("SUCCESS");
    const ev = await loopgate(["events", env.run_id, "--store", store, "--json"]);
    const sessions = ev.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown> })
      .filter((e) => e.type === "agent_session_finished");
    expect(sessions).toHaveLength(1);
    expect(sessions[0]?.data).toMatchObject({ agent: "codex", subtype: "turn.completed", is_error: false });
  });
});
