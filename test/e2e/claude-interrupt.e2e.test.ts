// Ctrl-C during `loopgate claude` while the real Claude Code is inside a long Bash call: the interrupt
// reaches the agent (SIGTERM to its process group, SIGKILL after a short grace), no Stop is answered with
// work, the run is TOOL_FAILURE "interrupted (SIGINT)" in seconds, and nothing of the run is left running.
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { ModelServer } from "../../src/agent/models/model-server/server.js";
import { agentBinary } from "../support/agent-binaries.js";
import { exited, startDetached, untilMarker, untilNoneLeft } from "./agent-interrupt-support.js";
import { addTask, modelServer } from "./claude-support.js";
import { loopgate, parseStdout, removeTemps, show, tempDir } from "./cli.js";

const claude = agentBinary("claude");
let server: ModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});
afterAll(removeTemps);

interface Ev {
  type: string;
  data: Record<string, unknown>;
}

describe.skipIf("missing" in claude)("Ctrl-C during loopgate claude (real Claude Code)", () => {
  it("mid tool call (Bash sleep 300): TOOL_FAILURE interrupted (SIGINT), exit 2, no process left, no model request after", {
    timeout: 300_000,
  }, async () => {
    const marker = `lg-interrupt-${process.pid}-${Date.now()}`;
    server = await modelServer([
      {
        text: "Running the slow step.",
        tool_calls: [{ name: "Bash", args: { command: `touch started && sleep 300 # ${marker}` } }],
      },
      { text: "Done." },
    ]);
    const store = join(tempDir("loopgate-claude-int-"), "store");
    const s = startDetached(
      ["claude", addTask({ attempts: 2 }), "--json", "--store", store, "--", "--allowedTools", "Bash"],
      { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "sk-model-server-dummy-key" },
    );
    const runDir = await untilMarker(store, "started", s);
    const seen = server.requests.length;
    const sent = Date.now();
    process.kill(-(s.child.pid as number), "SIGINT");
    const code = await exited(s.child);
    const seconds = (Date.now() - sent) / 1000;
    console.log(`loopgate claude: SIGINT mid tool call → exit ${code} in ${seconds.toFixed(1)} s`);
    // Claude's own Bash timeout is 120 s and windDown used to wait 120 s more: 30 s is generous.
    expect(seconds, s.out.stderr).toBeLessThan(30);
    expect(code, s.out.stderr).toBe(2);
    const left = await untilNoneLeft([marker, runDir], join(runDir, "workspace"), 3_000);
    expect(left, "processes of the run still alive").toEqual([]);
    // The agent made no model request after the interrupt (it was stopped, not let go on).
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
      .map((l) => JSON.parse(l) as Ev);
    const types = events.map((e) => e.type);
    // Nothing was gated, and no Stop was answered with work (a block).
    expect(types).not.toContain("gate_run_finished");
    expect(events.filter((e) => e.type === "stop_hook_answered" && e.data.decision === "block")).toEqual([]);
    expect(events.find((e) => e.type === "infrastructure_failed")?.data.interrupted).toBe(true);
    // It says truthfully what can be done next: a loopgate claude run is run again, not resumed.
    expect(s.out.stderr + s.out.stdout).not.toContain("loopgate resume");
    const resumed = await loopgate(["resume", env.run_id, "--store", store]);
    expect(resumed.code, show(resumed)).toBe(2);
    expect(resumed.stderr).toContain("a loopgate claude run cannot be resumed");
    expect(resumed.stderr).toMatch(/run its task again: .*loopgate(\.js)? claude \S*task\.yaml/);
  });

  it("interrupted while its Stop is held for the gates: the Stop is told to stop, no further model request", {
    timeout: 300_000,
  }, async () => {
    server = await modelServer([{ text: "All done." }, { text: "Still done." }]);
    const store = join(tempDir("loopgate-claude-int-"), "store");
    // A gate that takes long (and says it started), so the interrupt lands while the Stop is held.
    const task = addTask({
      attempts: 2,
      gateRun: ["sh", "-c", "echo gate-running; sleep 120"],
      gateTimeout: "300s",
    });
    const s = startDetached(
      ["claude", task, "--json", "--verbose", "--store", store, "--", "--allowedTools", "Bash"],
      { ANTHROPIC_BASE_URL: server.url, ANTHROPIC_API_KEY: "sk-model-server-dummy-key" },
    );
    // The gate runs once Claude's first Stop is held.
    const deadline = Date.now() + 180_000;
    while (!s.out.stderr.includes("gate-running") && Date.now() < deadline && s.child.exitCode === null)
      await new Promise((r) => setTimeout(r, 200));
    const seen = server.requests.length;
    const sent = Date.now();
    process.kill(-(s.child.pid as number), "SIGINT");
    const code = await exited(s.child);
    const seconds = (Date.now() - sent) / 1000;
    console.log(`loopgate claude: SIGINT while the Stop is held → exit ${code} in ${seconds.toFixed(1)} s`);
    expect(seconds, s.out.stderr).toBeLessThan(30);
    expect(code, s.out.stderr).toBe(2);
    expect(server.requests.length).toBe(seen);
    const env = parseStdout<{ run_id: string; status: string; reason: string }>({
      code,
      signal: null,
      ...s.out,
    });
    expect(env.status).toBe("TOOL_FAILURE");
    expect(env.reason).toContain("interrupted (SIGINT)");
    const r = await loopgate(["events", env.run_id, "--store", store, "--json"]);
    const answers = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Ev)
      .filter((e) => e.type === "stop_hook_answered");
    // The held Stop was answered once, and not with work: it was told to stop.
    expect(answers.map((a) => a.data.decision)).toEqual(["allow"]);
    expect(String(answers[0]?.data.reason)).toContain('"continue":false');
  });
});
