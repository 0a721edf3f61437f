import { beforeEach, describe, expect, it } from "vitest";
import { driveGoalRun } from "../../src/cli/commands/goal/goal-run-drive.js";
import { cliName } from "../../src/cli/output/invocation.js";
import type { CommandIO } from "../../src/cli/output/io.js";
import { type ContractView, contractIdentity, type WakeUp } from "../../src/core/goal/schedule/scheduler.js";
import type { TickOutcome, TickRequest } from "../../src/runner/goal/turn/tick-outcome.js";

// What `goal run` prints, over a scripted tick: live progress, a line per turn, why it stopped, who acts.

const T0 = Date.parse("2026-12-01T10:00:00.000Z");
const runNow: WakeUp = { action: "run_now", at: new Date(T0).toISOString(), why: "work is selected" };
const ask: WakeUp = { action: "ask_user", at: null, why: "a person must decide a gate" };
const v: ContractView = {
  runtimeState: "eligible",
  selectedTodo: "todo_crlf",
  gateIds: [],
  notBefore: null,
  terminal: false,
};
const script = (): TickOutcome[] => [
  {
    kind: "advanced",
    turn: { goal_id: "csv", agent_id: "builder", turn_instance_id: "t1" },
    work: { kind: "todo", todo_id: "todo_crlf" },
    result: "SUCCESS, committed 3f2a9c1e",
    changed: true,
    wake: runNow,
  },
  { kind: "waiting_person", who: "a maintainer (publish)", gateId: "todo_publish_gate", wake: ask },
];

function capture(): CommandIO & { stdout: string; stderr_: string } {
  const io = {
    stdout: "",
    stderr_: "",
    out(s: string) {
      io.stdout += s;
    },
    err(s: string) {
      io.stderr_ += s;
    },
    stderr: process.stderr,
  };
  return io;
}

let turn = 0;
const deps = (outcomes: TickOutcome[]) => ({
  tick: async (req: TickRequest) => {
    turn++;
    req.onProgress?.({
      turn,
      todo: "todo_crlf",
      phase: "host_execute",
      detail: `run turn-csv-t${turn} started`,
    });
    const o = outcomes.shift();
    if (!o) throw new Error("script ran out");
    return o;
  },
  probe: async () => ({ view: v, identity: contractIdentity(v), backoff: null }),
  sleep: async () => {},
  clock: () => new Date(T0),
  signal: new AbortController().signal,
});

describe("goal run output", () => {
  beforeEach(() => {
    turn = 0;
  });
  it("text: a progress line per phase, a line per turn with the next wake-up, then who must act and the command", async () => {
    const io = capture();
    const code = await driveGoalRun(
      io,
      { goalId: "csv", agentId: "builder", storeArg: "--store /tmp/g" },
      { json: false, mode: "run" },
      deps(script()),
    );
    expect(code).toBe(1);
    expect(io.stdout.split("\n")).toEqual([
      "turn 1 · todo_crlf · host_execute: run turn-csv-t1 started",
      "turn 1 · todo_crlf · advanced: SUCCESS, committed 3f2a9c1e — next: run now (work is selected)",
      "turn 2 · todo_crlf · host_execute: run turn-csv-t2 started",
      "turn 2 · waiting on a maintainer (publish) to decide todo_publish_gate — next: when a person decides (a person must decide a gate)",
      "goal csv: waiting_person after 2 tick(s): a maintainer (publish) must decide todo_publish_gate",
      "who must act: a maintainer (publish)",
      `next: ${cliName()} gate approve csv todo_publish_gate --store /tmp/g (or reject, cancel, defer --until COND); then ${cliName()} goal run csv --store /tmp/g`,
      "",
    ]);
  });

  it("--json: one JSON line per turn and a summary line; phases on stderr", async () => {
    const io = capture();
    const code = await driveGoalRun(
      io,
      { goalId: "csv", agentId: "builder", storeArg: "" },
      { json: true, mode: "run" },
      deps(script()),
    );
    expect(code).toBe(1);
    const lines = io.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatchObject({
      goal: "csv",
      turn: 1,
      todo: "todo_crlf",
      outcome: "advanced",
      wake: runNow,
      next: { kind: "tick" },
    });
    expect(lines[1]).toMatchObject({
      turn: 2,
      outcome: "waiting_person",
      next: { kind: "exit", code: 1, stop: "waiting_person" },
    });
    // The outcome is printed in its wire shape: snake_case keys, in their order.
    expect(io.stdout.trim().split("\n")[1]).toContain(
      '"detail":{"kind":"waiting_person","who":"a maintainer (publish)","gate_id":"todo_publish_gate"}',
    );
    expect(lines[2]).toEqual({
      goal: "csv",
      summary: true,
      exit_code: 1,
      stop: "waiting_person",
      why: "a maintainer (publish) must decide todo_publish_gate",
      who: "a maintainer (publish)",
      turns: 2,
    });
    expect(io.stderr_).toContain("turn 1 · todo_crlf · host_execute");
  });

  it("text from outside is one bounded inert line", async () => {
    const io = capture();
    const evil: TickOutcome = {
      kind: "failed",
      turn: null,
      code: "identity_mismatch",
      detail: `line1\nline2\u001b[2J${"x".repeat(1000)}`,
      wake: runNow,
    };
    expect(
      await driveGoalRun(
        io,
        { goalId: "csv", agentId: "b", storeArg: "" },
        { json: false, mode: "run" },
        deps([evil]),
      ),
    ).toBe(2);
    const turnLine = io.stdout.split("\n")[1] ?? "";
    expect(turnLine).toContain("line1\\nline2");
    expect(turnLine).not.toContain("\u001b");
    expect(turnLine.length).toBeLessThan(500);
  });
});
