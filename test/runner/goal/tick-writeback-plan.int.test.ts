import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { oracleBuilder } from "../../../src/builders/command-builder.js";
import { goalNewCommand } from "../../../src/cli/commands/goal/goal.js";
import { openStore } from "../../../src/cli/output/context.js";
import type { LoopgateEvent, RecordedEvent } from "../../../src/core/events/loopgate-event.js";
import { goalStream } from "../../../src/runner/goal/goal-store.js";
import { goalWorkspace } from "../../../src/runner/goal/repo/goal-workspace.js";
import { tick } from "../../../src/runner/goal/turn/tick.js";
import type { RunHost } from "../../../src/runner/goal/turn/tick-context.js";
import { runTask } from "../../../src/runner/run/run-task.js";
import { RunJournal } from "../../../src/runner/stream/run-journal.js";
import type { EventStore } from "../../../src/store/kernel/event-store.js";

// `goal tick` on a todo whose run passed: the durable writeback writes the change the run's gates saw,
// and refuses (turn_failed writeback_rejected, nothing committed) when a gate record of the run names
// another change plan than the one the writeback recomputes. Real SQLite, real git, the oracle as the
// builder and the gates in real bubblewrap.

const G = "wb-plan-goal";
const TASK = resolve("examples/goal-csvcol/tasks/quoted-fields/task.yaml");
const REPO = resolve("examples/sh-csvcol/repo");
const temps: string[] = [];
afterAll(() => {
  for (const t of temps) rmSync(t, { recursive: true, force: true });
});

async function newGoal(): Promise<{ localDir: string; store: EventStore }> {
  const dir = mkdtempSync(join(tmpdir(), "lg-tick-wb-plan-"));
  temps.push(dir);
  writeFileSync(
    join(dir, "goal.yaml"),
    [
      `id: ${G}`,
      "objective: csvcol reads quoted fields.",
      `workspace: ${JSON.stringify(REPO)}`,
      "builder: oracle",
      "budget: { window: 24h, turns: 20, cost_usd: 5 }",
      "acceptance:",
      `  - { task: ${JSON.stringify(TASK)}, gates: [heldout-quoted] }`,
      "todos:",
      "  - id: todo_quoted",
      "    class: advancement_task",
      "    content: Read quoted fields.",
      `    task: ${JSON.stringify(TASK)}`,
      "",
    ].join("\n"),
  );
  const localDir = join(dir, "store");
  const err: string[] = [];
  const io = { out: () => {}, err: (s: string) => void err.push(s), stderr: process.stderr };
  const code = await goalNewCommand(io, join(dir, "goal.yaml"), { store: localDir, json: true });
  expect(code, err.join("")).toBe(0);
  return { localDir, store: await openStore(localDir, true) };
}

/** The todo's run with the task's oracle as the builder; `after` may touch the finished run's log. */
const host =
  (f: { localDir: string; store: EventStore }, after: (runId: string) => Promise<void>): RunHost =>
  async (run) => {
    if (run.resume || run.gatesOnly) throw new Error("one fresh todo run expected");
    const env = await runTask({
      runId: run.runId,
      loaded: run.loaded,
      builder: oracleBuilder(run.loaded.oracle ?? ""),
      store: f.store,
      localDir: f.localDir,
      sandbox: "bubblewrap",
      goal: run.goal,
    });
    expect(env.status, env.reason).toBe("SUCCESS");
    await after(run.runId);
    return env;
  };

const head = (localDir: string) =>
  execFileSync("git", ["rev-parse", "HEAD"], { cwd: goalWorkspace(localDir, G), encoding: "utf8" }).trim();
const types = (es: RecordedEvent[]) => es.map((e) => e.type);

describe("goal tick writes back exactly the change plan the run's gates saw", () => {
  it("the digests agree: the writeback is accepted and committed", async () => {
    const f = await newGoal();
    const before = head(f.localDir);
    await tick(
      { store: f.store, localDir: f.localDir, runHost: host(f, async () => {}) },
      { goalId: G, agentId: "oracle" },
    );
    const es = await f.store.readStream(goalStream(G));
    expect(types(es)).toContain("turn_writeback_accepted");
    expect(types(es)).not.toContain("turn_failed");
    expect(head(f.localDir)).not.toBe(before);
  });

  it("a gate record naming another plan: writeback_rejected naming the mismatch, nothing committed", async () => {
    const f = await newGoal();
    const before = head(f.localDir);
    const forge = async (runId: string) => {
      const stream = RunJournal.stream(runId);
      const gates = (await f.store.readStream(stream)).filter((e) => e.type === "gate_run_finished");
      const last = gates.at(-1);
      if (last?.type !== "gate_run_finished") throw new Error("the run recorded no gate");
      expect(last.data.change_plan_digest).toMatch(/^[0-9a-f]{64}$/);
      const forged = {
        id: randomUUID(),
        type: "gate_run_finished",
        data: { ...last.data, change_plan_digest: "f".repeat(64) },
        meta: last.meta,
      } as LoopgateEvent;
      await f.store.append(stream, [forged], "any");
    };
    await tick(
      { store: f.store, localDir: f.localDir, runHost: host(f, forge) },
      { goalId: G, agentId: "oracle" },
    );
    const es = await f.store.readStream(goalStream(G));
    expect(types(es)).not.toContain("turn_writeback_accepted");
    const failure = es.flatMap((e) =>
      e.type === "turn_failed" ? [(e.data as { failure: { code: string; detail: string } }).failure] : [],
    );
    expect(failure).toHaveLength(1);
    expect(failure[0]?.code).toBe("writeback_rejected");
    expect(failure[0]?.detail).toMatch(/change plan mismatch: gate \S+ ran on the change plan f{64}/);
    expect(head(f.localDir)).toBe(before);
  });
});
