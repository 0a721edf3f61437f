import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { noopBuilder } from "../../../src/builders/command-builder.js";
import { goalNewCommand } from "../../../src/cli/commands/goal/goal.js";
import { openStore } from "../../../src/cli/output/context.js";
import type { RecordedEvent } from "../../../src/core/events/loopgate-event.js";
import { obligations } from "../../../src/core/goal/obligations.js";
import { goalState } from "../../../src/runner/goal/goal-engine.js";
import { writeGoal } from "../../../src/runner/goal/goal-service.js";
import { goalStream } from "../../../src/runner/goal/goal-store.js";
import { acceptanceRunId } from "../../../src/runner/goal/turn/acceptance-step.js";
import { tick } from "../../../src/runner/goal/turn/tick.js";
import type { RunHost, TickDeps, TurnRun } from "../../../src/runner/goal/turn/tick-context.js";
import { resumeRun } from "../../../src/runner/run/resume-run.js";
import { runTask } from "../../../src/runner/run/run-task.js";
import { RunJournal } from "../../../src/runner/stream/run-journal.js";
import type { EventStore } from "../../../src/store/kernel/event-store.js";

// The acceptance turn of `goal tick`, below the CLI: a goal whose frontier is exhausted (no advancement
// todo) proves its acceptance in a governed turn. Real SQLite, real git, the gates in real bubblewrap on
// the revision's tree; the kills are injected at the journal and the run host (no sleeping).

const G = "accept-goal";
const TASK = resolve("examples/goal-csvcol/tasks/quoted-fields/task.yaml");
const REPO = resolve("examples/sh-csvcol/repo");
// On the unfixed repository: the shebang gate passes, the held-out quoted-fields gate fails.
const PASSING = "posix-shebang";
const FAILING = "heldout-quoted";
const temps: string[] = [];
afterAll(() => {
  for (const t of temps) rmSync(t, { recursive: true, force: true });
});

interface Fixture {
  localDir: string;
  store: EventStore;
  runs: TurnRun[];
  /** The event types of every append to the goal stream, batch by batch. */
  batches: string[][];
}

/** The store, with every goal-stream append's batch noted (to tell what was one append). */
function noting(store: EventStore, batches: string[][]): EventStore {
  return new Proxy(store, {
    get(target, p, r) {
      const v = Reflect.get(target, p, r);
      if (typeof v !== "function") return v;
      if (p !== "append") return v.bind(target);
      return async (stream: string, events: { type: string }[], expected: unknown) => {
        const res = await v.call(target, stream, events, expected);
        if (stream === goalStream(G)) batches.push(events.map((e) => e.type));
        return res;
      };
    },
  });
}

async function newGoal(): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), "lg-tick-accept-"));
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
      `  - { task: ${JSON.stringify(TASK)}, gates: [${PASSING}] }`,
      `  - { task: ${JSON.stringify(TASK)}, gates: [${FAILING}] }`,
      "todos:",
      "  - id: todo_done",
      "    class: advancement_task",
      "    content: Closed before the test, so the frontier is exhausted.",
      `    task: ${JSON.stringify(TASK)}`,
      "",
    ].join("\n"),
  );
  const localDir = join(dir, "store");
  const err: string[] = [];
  const io = { out: () => {}, err: (s: string) => void err.push(s), stderr: process.stderr };
  const code = await goalNewCommand(io, join(dir, "goal.yaml"), { store: localDir, json: true });
  expect(code, err.join("")).toBe(0);
  const store = await openStore(localDir, true);
  const log = await store.readStream(goalStream(G));
  const close = { type: "close_no_followup", todoId: "todo_done", rationale: "done elsewhere" } as const;
  await writeGoal(store, localDir, G, { kind: "command", command: close }, log.at(-1)?.revision ?? -1);
  const batches: string[][] = [];
  return { localDir, store: noting(store, batches), runs: [], batches };
}

/** The run host as the CLI builds it: the gates alone (noop builder) for an acceptance run, resumed by id. */
const host =
  (f: Fixture): RunHost =>
  async (run) => {
    f.runs.push(run);
    if (!run.gatesOnly) throw new Error("an acceptance turn runs gates only");
    if (run.resume)
      return resumeRun({
        runId: run.runId,
        store: f.store,
        localDir: f.localDir,
        builder: () => noopBuilder(),
      });
    return runTask({
      runId: run.runId,
      loaded: run.loaded,
      builder: noopBuilder(),
      store: f.store,
      localDir: f.localDir,
      sandbox: "bubblewrap",
      goal: run.goal,
    });
  };

const deps = (f: Fixture, extra: Partial<TickDeps> = {}): TickDeps => ({
  store: f.store,
  localDir: f.localDir,
  runHost: host(f),
  ...extra,
});
const tickOnce = (f: Fixture, extra: Partial<TickDeps> = {}) =>
  tick(deps(f, extra), { goalId: G, agentId: "oracle" });
const events = (f: Fixture): Promise<RecordedEvent[]> => f.store.readStream(goalStream(G));
const count = (es: RecordedEvent[], type: string) => es.filter((e) => e.type === type).length;
const TURN = ["turn_bound", "turn_host_executed", "turn_typed_result", "turn_validated"];

/** The settled-turn facts every variant must end with, exactly once each. */
async function expectSettledOnce(f: Fixture) {
  const es = await events(f);
  const s = goalState(es);
  for (const t of [...TURN, "turn_writeback_accepted", "turn_quota_spent", "turn_scheduler_acked"])
    expect(count(es, t), t).toBe(1);
  expect(count(es, "acceptance_receipt_recorded")).toBe(2);
  const statuses = Object.fromEntries(
    Object.entries(s.acceptanceReceipts).map(([id, r]) => [id.split("#")[1], r.map((e) => e.receipt.status)]),
  );
  expect(statuses[PASSING]).toEqual(["SUCCESS"]);
  expect(statuses[FAILING]).toHaveLength(1);
  expect(statuses[FAILING]?.[0]).not.toBe("SUCCESS");
  // The receipts and the writeback are one append.
  const wb = f.batches.filter((b) => b.includes("acceptance_receipt_recorded"));
  expect(wb).toEqual([
    ["turn_writeback_accepted", "acceptance_receipt_recorded", "acceptance_receipt_recorded"],
  ]);
  // The spend: one turn, no tokens (gates alone, no model).
  const spent = es.find((e) => e.type === "turn_quota_spent")?.data as { usage: unknown };
  expect(spent.usage).toEqual({ tokens: 0, cost_usd: 0, turns: 1 });
  // A failing acceptance leaves the replan obligation.
  expect(obligations(s).map((o) => o.kind)).toContain("replan_acceptance_failed");
  // Each item ran once, under the turn's deterministic run id.
  const bound = es.find((e) => e.type === "turn_bound")?.data as {
    identity: { goal_id: string; agent_id: string; turn_instance_id: string };
    work: { kind: string; acceptance_ids: string[] };
  };
  expect(bound.work.kind).toBe("acceptance");
  for (const aid of bound.work.acceptance_ids) {
    const started = (
      await f.store.readStream(RunJournal.stream(acceptanceRunId(bound.identity, aid)))
    ).filter((e) => e.type === "run_started");
    expect(started, aid).toHaveLength(1);
  }
  return es;
}

describe("goal tick proves acceptance in a governed turn", () => {
  it("binds a turn to acceptance once the frontier is exhausted and records the receipts once", async () => {
    const f = await newGoal();
    const out = await tickOnce(f);
    expect(out.kind, JSON.stringify(out)).toBe("advanced");
    expect(JSON.stringify(out)).toMatch(/acceptance does not hold/);
    expect(f.runs.map((r) => r.resume)).toEqual([false, false]);
    const es = await expectSettledOnce(f);
    const types = es.map((e) => e.type).filter((t) => t.startsWith("turn_") && !t.startsWith("turn_lease"));
    expect(types).toEqual([
      "turn_bound",
      "turn_effect_prepared",
      "turn_host_executed",
      "turn_typed_result",
      "turn_validated",
      "turn_effect_prepared",
      "turn_writeback_accepted",
      "turn_quota_spent",
      "turn_scheduler_applied",
      "turn_scheduler_acked",
    ]);
    // The next tick does not prove acceptance again on the same revision: a replan obligation waits.
    const again = await tickOnce(f);
    expect(again.kind).not.toBe("advanced");
    expect(count(await events(f), "acceptance_receipt_recorded")).toBe(2);
  });

  it("a kill after the gates ran, before host_execute is recorded: the next tick reuses the runs", async () => {
    const f = await newGoal();
    let calls = 0;
    const dying: RunHost = async (run) => {
      const env = await host(f)(run);
      if (++calls === 2) throw new Error("killed after the gates");
      return env;
    };
    await expect(tickOnce(f, { runHost: dying })).rejects.toThrow(/killed after the gates/);
    const out = await tickOnce(f);
    expect(out.kind, JSON.stringify(out)).toBe("advanced");
    expect(f.runs).toHaveLength(2); // nothing ran again: both runs were finished and reused
    await expectSettledOnce(f);
  });

  for (const after of ["turn_validated", "turn_effect_prepared#2"] as const) {
    it(`a kill after ${after} (the gates ran, the receipts not yet appended): receipts exactly once`, async () => {
      const f = await newGoal();
      const [type, nth] = after.split("#") as [string, string | undefined];
      let seen = 0;
      // Kill = the append of `after` is durable, then the process is gone.
      const kill = {
        store: new Proxy(f.store, {
          get(target, p, r) {
            const v = Reflect.get(target, p, r);
            if (p !== "append" || typeof v !== "function")
              return typeof v === "function" ? v.bind(target) : v;
            return async (...args: unknown[]) => {
              const res = await (v as (...a: unknown[]) => Promise<unknown>).apply(target, args);
              const batch = (args[1] ?? []) as { type: string }[];
              if (batch.some((e) => e.type === type) && ++seen === Number(nth ?? 1))
                throw new Error(`killed after ${after}`);
              return res;
            };
          },
        }),
      };
      await expect(tickOnce(f, kill)).rejects.toThrow(/killed after/);
      expect(count(await events(f), "acceptance_receipt_recorded")).toBe(0);
      const out = await tickOnce(f);
      expect(out.kind, JSON.stringify(out)).toBe("advanced");
      expect(f.runs).toHaveLength(2);
      const es = await expectSettledOnce(f);
      // A prepared writeback is resolved by readback (its receipts absent → appended now), never blindly.
      const readbacks = es.filter((e) => e.type === "turn_effect_readback").map((e) => e.data);
      expect(readbacks).toEqual(
        nth ? [expect.objectContaining({ phase: "durable_writeback", found: "absent" })] : [],
      );
    });
  }
});
