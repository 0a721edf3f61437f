// Ctrl-C during a built-in agent run: the abort reaches the running tool call, the run is recorded as
// TOOL_FAILURE "interrupted (SIGINT)" at once (not after a budget cap), it exits 2 — directly and
// through `npx loopgate` — and `loopgate resume` continues it to its verdict.
import { type ChildProcess, spawn } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import {
  BIN,
  loopgate,
  parseStdout,
  ROOT,
  removeTemps,
  show,
  tempDir,
  withLocalInstall,
  writeTask,
} from "./cli.js";

afterAll(removeTemps);

const TASK = `id: interrupt-me
prompt: Make greeting.txt say bye.
workspace: ./repo
gates:
  - id: says-bye
    static: { path: greeting.txt, match: "^bye$" }
budget: { attempts: 1 }
`;

/** A script whose first call runs 30 s, so the interrupt lands inside a tool call; then an honest fix. */
function slowScript(dir: string): string {
  const file = join(dir, "slow.yaml");
  writeFileSync(
    file,
    stringify([
      { tool_calls: [{ name: "bash", args: { command: "touch started && sleep 30" } }] },
      { tool_calls: [{ name: "write_file", args: { path: "greeting.txt", content: "bye\n" } }] },
      { text: "greeting.txt says bye." },
    ]),
  );
  return file;
}

/** Resolves once the sandboxed `sleep` is running: the marker it wrote is in the run's workspace. */
async function untilToolRuns(store: string, child: ChildProcess): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && child.exitCode === null) {
    const runs = existsSync(join(store, "runs")) ? readdirSync(join(store, "runs")) : [];
    if (runs.some((r) => existsSync(join(store, "runs", r, "workspace", "started")))) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the scripted bash call never started");
}

function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((res) => {
    if (child.exitCode !== null) res(child.exitCode);
    else child.on("close", (code) => res(code));
  });
}

interface Status {
  run_id: string;
  status: string;
  reason: string;
}

async function interruptAndCheck(
  argv0: string,
  args: string[],
  store: string,
  env: Record<string, string> = {},
  cwd = ROOT,
) {
  // detached: its own process group, which receives the SIGINT as a terminal's Ctrl-C would send it.
  const child = spawn(argv0, args, {
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
    env: { ...process.env, ...env },
  });
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  await untilToolRuns(store, child);
  const sent = Date.now();
  process.kill(-(child.pid as number), "SIGINT");
  const code = await exited(child);
  // Generous: a kill that did not reach the tool call would wait out its 30 s sleep.
  expect(Date.now() - sent, stderr).toBeLessThan(15_000);
  expect(code, stderr).toBe(2);
  const runs = parseStdout<Status[]>(await loopgate(["runs", "--store", store, "--json"]));
  expect(runs).toHaveLength(1);
  const run = runs[0] as Status;
  expect(run.status).toBe("TOOL_FAILURE");
  expect(run.reason).toContain("interrupted (SIGINT)");
  const events = (await loopgate(["events", run.run_id, "--store", store, "--json"])).stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown> });
  const types = events.map((e) => e.type);
  // What the interrupt cut has no result (an agent's call is in doubt; a builder has no builder_finished),
  // no budget cap was reached, nothing was gated.
  expect(types).not.toContain("tool_call_finished");
  expect(types).not.toContain("builder_finished");
  expect(types).not.toContain("budget_exhausted");
  expect(types).not.toContain("gate_run_finished");
  expect(events.find((e) => e.type === "infrastructure_failed")?.data.interrupted).toBe(true);
  return run;
}

describe("interrupting the built-in agent", () => {
  it("SIGINT during a tool call records TOOL_FAILURE at once, exits 2, and resume continues the run", async () => {
    const task = writeTask(TASK);
    const dir = tempDir();
    const store = join(dir, "store");
    const script = slowScript(dir);
    const run = await interruptAndCheck(
      process.execPath,
      [BIN, "run", task, "--model", `scripted:${script}`, "--store", store],
      store,
    );
    const resumed = await loopgate(["resume", run.run_id, "--store", store, "--json"]);
    expect(resumed.code, show(resumed)).toBe(0);
    const env = parseStdout<Status>(resumed);
    const before = (await loopgate(["events", run.run_id, "--store", store, "--json"])).stdout;
    expect(before).toContain('"type":"tool_call_started"');
    expect(env.status).toBe("SUCCESS");
    const events = (await loopgate(["events", run.run_id, "--store", store, "--json"])).stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { type: string; data: Record<string, unknown> });
    // Reopened, then the in-doubt bash call was rolled back and reported to the model, never re-run.
    expect(events.some((e) => e.type === "run_resumed" && e.data.reopened === true)).toBe(true);
    expect(events.filter((e) => e.type === "tool_call_abandoned")).toHaveLength(1);
    expect(events.filter((e) => e.type === "run_finished").map((e) => e.data.status)).toEqual([
      "TOOL_FAILURE",
      "SUCCESS",
    ]);
    const again = await loopgate(["status", run.run_id, "--store", store, "--json"]);
    expect(again.code).toBe(0);
  });

  // npx runs loopgate through `sh -c`, and npm forwards the SIGINT it gets, so loopgate sees Ctrl-C twice
  // (it must not take the copy for a second press). Debian's /bin/sh (dash) then reports its child's
  // orderly exit 2 as its own death by SIGINT (130); bash does not, hence the script shell here and
  // the advice of docs/guides/your-repository.md (npm link, or npm's script-shell set to bash).
  it("through npx loopgate, Ctrl-C to the process group records the interrupt and exits 2", async () => {
    const task = writeTask(TASK);
    const dir = tempDir();
    const store = join(dir, "store");
    const project = join(dir, "project");
    withLocalInstall(project);
    await interruptAndCheck(
      "npx",
      ["--no-install", "loopgate", "run", task, "--model", `scripted:${slowScript(dir)}`, "--store", store],
      store,
      { npm_config_script_shell: "/bin/bash" },
      project,
    );
  });
});

describe("interrupting an external builder", () => {
  it("records no result for the killed builder; resume rolls back and runs it again, to SUCCESS", async () => {
    const task = writeTask(TASK);
    const dir = tempDir();
    const store = join(dir, "store");
    // The builder's folder is mounted read-only; the test drops `go` into it between run and resume.
    const tools = join(dir, "tools");
    mkdirSync(tools);
    const script = join(tools, "agent.sh");
    writeFileSync(
      script,
      `#!/bin/sh\nif [ -e ${tools}/go ]; then echo bye > greeting.txt; exit 0; fi\ntouch started\nsleep 30\n`,
    );
    chmodSync(script, 0o755);
    const run = await interruptAndCheck(
      process.execPath,
      [BIN, "run", task, "--builder", script, "--builder-mount", tools, "--store", store],
      store,
    );
    writeFileSync(join(tools, "go"), "");
    const resumed = await loopgate([
      "resume",
      run.run_id,
      "--store",
      store,
      "--builder-mount",
      tools,
      "--json",
    ]);
    expect(resumed.code, show(resumed)).toBe(0);
    const env = parseStdout<Status & { attempts: number }>(resumed);
    expect(env.status).toBe("SUCCESS");
    expect(env.attempts).toBe(1);
    // The half-done work of the killed run (its marker) was rolled back before the builder ran again.
    expect(existsSync(join(store, "runs", run.run_id, "workspace", "started"))).toBe(false);
  });
});
