import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { goalNewCommand } from "../../../src/cli/commands/goal/goal.js";
import { openStore } from "../../../src/cli/output/context.js";
import type { RecordedEvent } from "../../../src/core/events/loopgate-event.js";
import type { GoalState } from "../../../src/core/goal/goal-state-shape.js";
import { obligations } from "../../../src/core/goal/obligations.js";
import { goalState } from "../../../src/runner/goal/goal-engine.js";
import { writeGoal } from "../../../src/runner/goal/goal-service.js";
import { goalStream } from "../../../src/runner/goal/goal-store.js";
import { goalWorkspace } from "../../../src/runner/goal/repo/goal-workspace.js";
import { tick } from "../../../src/runner/goal/turn/tick.js";
import type { TickDeps } from "../../../src/runner/goal/turn/tick-context.js";
import type { TickOutcome } from "../../../src/runner/goal/turn/tick-outcome.js";
import type { EventStore } from "../../../src/store/kernel/event-store.js";

// `goal tick` on a continuous monitor and a replan obligation, below the CLI: a real SQLite store, the
// poll in real bubblewrap on the git tree of the goal's revision, the clock injected (no sleeping).

const G = "watch-goal";
const W = "todo_watch";
const T0 = Date.parse("2026-12-01T10:00:00.000Z");
const temps: string[] = [];
const ACCEPTANCE_TASK = resolve("examples/goal-csvcol/tasks/quoted-fields/task.yaml");
afterAll(() => {
  for (const t of temps) rmSync(t, { recursive: true, force: true });
});

interface Fixture {
  dir: string;
  localDir: string;
  store: EventStore;
  clock: { now: number };
}

/**
 * A goal waiting on a deferred fix, with a monitor every hour, created as `goal new` does. The default poll
 * reads reports.txt of the turn's revision of the goal workspace ($LOOPGATE_GOAL_WORKSPACE); its argv
 * itself resolves against the goal file's folder.
 */
async function newGoal(
  maxNoChange = 5,
  argv = ["sh", "-c", 'cat "$LOOPGATE_GOAL_WORKSPACE/reports.txt"'],
  /** Files beside the goal file, written before `goal new`, and extra top-level lines of the goal file. */
  extra: { files?: Record<string, string>; lines?: string[] } = {},
): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), "lg-tick-monitor-"));
  temps.push(dir);
  mkdirSync(join(dir, "repo"));
  writeFileSync(join(dir, "repo", "reports.txt"), "no reports\n");
  for (const [name, text] of Object.entries(extra.files ?? {})) writeFileSync(join(dir, name), text);
  const limit = `, max_no_change_before_replan: ${maxNoChange}`;
  writeFileSync(
    join(dir, "goal.yaml"),
    [
      `id: ${G}`,
      "objective: Watch incoming reports.",
      "workspace: ./repo",
      "builder: oracle",
      "budget: { window: 24h, turns: 20, cost_usd: 5 }",
      ...(extra.lines ?? []),
      `acceptance: [{ task: ${JSON.stringify(ACCEPTANCE_TASK)}, gates: [heldout-quoted] }]`,
      "todos:",
      // An advancement todo deferred past the test's clock: the goal is waiting, its monitor the only work.
      "  - id: todo_later",
      "    class: advancement_task",
      "    content: A fix for later.",
      `    task: ${JSON.stringify(ACCEPTANCE_TASK)}`,
      `  - id: ${W}`,
      "    class: continuous_monitor",
      "    content: Watch reports; a new one asks for a successor.",
      `    poll: { run: ${JSON.stringify(argv)}, every: 1h${limit} }`,
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
  const later = { kind: "at", at: "2027-06-01T00:00:00.000Z" } as const;
  const defer = { type: "defer_todo", todoId: "todo_later", resumeWhen: later } as const;
  await writeGoal(store, localDir, G, { kind: "command", command: defer }, log.at(-1)?.revision ?? -1);
  return { dir, localDir, store, clock: { now: T0 } };
}

const deps = (f: Fixture, extra: Partial<TickDeps> = {}): TickDeps => ({
  store: f.store,
  localDir: f.localDir,
  runHost: () => Promise.reject(new Error("a monitor or planner turn runs no task")),
  clock: () => new Date(f.clock.now),
  ...extra,
});
const tickOnce = (f: Fixture, extra: Partial<TickDeps> = {}) =>
  tick(deps(f, extra), { goalId: G, agentId: "oracle" });
const events = (f: Fixture): Promise<RecordedEvent[]> => f.store.readStream(goalStream(G));
const state = async (f: Fixture): Promise<GoalState> => goalState(await events(f));
const count = (es: RecordedEvent[], type: string) => es.filter((e) => e.type === type).length;
const hours = (f: Fixture, h: number) => {
  f.clock.now += h * 3_600_000;
};

/** A person's commit in the goal workspace (what the monitor reads changes), recorded as the goal's revision. */
async function commitReports(f: Fixture, text: string): Promise<void> {
  const ws = goalWorkspace(f.localDir, G);
  writeFileSync(join(ws, "reports.txt"), text);
  const git = (...a: string[]) =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@t", ...a], { cwd: ws, encoding: "utf8" });
  const previous = git("rev-parse", "HEAD").trim();
  git("commit", "-qam", "a new report");
  const revision = git("rev-parse", "HEAD").trim();
  const read = await events(f);
  await writeGoal(
    f.store,
    f.localDir,
    G,
    { kind: "command", command: { type: "record_revision", revision, previous, reason: "a report came in" } },
    (read.at(-1)?.revision ?? -1) as number,
  );
}

const advanced = (o: TickOutcome) => {
  expect(o.kind, JSON.stringify(o)).toBe("advanced");
  return o as Extract<TickOutcome, { kind: "advanced" }>;
};

describe("goal tick on a continuous monitor", () => {
  it("baseline; before due a quiet no-op (no poll, no spend); a changed input opens exactly one successor", async () => {
    const f = await newGoal();
    try {
      const first = advanced(await tickOnce(f));
      expect(first.changed).toBe(false);
      expect(first.work).toEqual({ kind: "todo", todo_id: W });
      let s = await state(f);
      const m = s.monitors[W];
      expect(m?.resultHash).toMatch(/^sha256:[0-9a-f]{64}$/);
      expect(m?.nextDueAt).toBe(new Date(T0 + 3_600_000).toISOString());
      const t1 = s.turns[`${G}/oracle/t1`];
      expect(t1?.result).toEqual({ kind: "observation", result_hash: m?.resultHash });
      expect(t1?.spend?.usage).toEqual({ tokens: 0, cost_usd: 0, turns: 1 });
      expect(s.spends).toHaveLength(1);

      // 30 minutes later: not due. Nothing is bound, polled or spent; the wake-up is the due time.
      hours(f, 0.5);
      const before = await events(f);
      const quiet = await tickOnce(f);
      expect(quiet.kind).toBe("idle");
      expect(quiet.wake.at).toBe(m?.nextDueAt);
      const after = await events(f);
      const newTypes = after.slice(before.length).map((e) => e.type);
      expect(newTypes.filter((t) => !t.startsWith("turn_lease_"))).toEqual([]);

      // The report file changes on a new revision; due again: one observation, one successor.
      await commitReports(f, "report: CRLF input breaks the last column\n");
      hours(f, 1);
      const change = advanced(await tickOnce(f));
      expect(change.changed).toBe(true);
      s = await state(f);
      const es = await events(f);
      expect(count(es, "monitor_observation_recorded")).toBe(1);
      expect(count(es, "monitor_successor_created")).toBe(1);
      const successors = s.order.filter((id) => s.todos[id]?.successorOf === W);
      expect(successors).toEqual([`${W}_g1`]);
      expect(s.monitors[W]?.materialChangeGeneration).toBe(1);
      expect(s.spends).toHaveLength(2);
      // The observation and its successor are in the writeback's append, under its effect_ref.
      const ref = `${G}/oracle/t2#durable_writeback`;
      const wb = es.findIndex(
        (e) => e.type === "turn_writeback_accepted" && JSON.stringify(e.data).includes("/t2"),
      );
      expect(es.slice(wb, wb + 4).map((e) => e.type)).toEqual([
        "turn_writeback_accepted",
        "monitor_observation_recorded",
        "todo_added",
        "monitor_successor_created",
      ]);
      expect(new Set(es.slice(wb, wb + 4).map((e) => e.meta.at)).size).toBe(1);
      expect(Object.keys(s.monitors[W]?.operations ?? {})).toContain(ref);
    } finally {
      await f.store.close();
    }
  });

  for (const killAfter of ["turn_validated", "turn_effect_prepared"] as const)
    it(`a kill after the poll (after ${killAfter}) then a tick: exactly one observation and one successor`, async () => {
      const f = await newGoal();
      try {
        advanced(await tickOnce(f));
        await commitReports(f, "report: a new one\n");
        hours(f, 2);
        const start = (await events(f)).filter((e) => e.type !== "turn_lease_heartbeat").length;
        // lease, bind, prepare host, host executed, typed result, validated, prepare writeback
        const at = start + (killAfter === "turn_validated" ? 6 : 7);
        const kill = (before: number, after: number) => {
          if (before < at && at <= after) throw new Error("killed");
        };
        await expect(tickOnce(f, { afterGoalAppend: kill })).rejects.toThrow("killed");
        const cut = await events(f);
        const turnFacts = cut.filter((e) => e.type.startsWith("turn_") && !e.type.startsWith("turn_lease_"));
        expect(turnFacts.at(-1)?.type).toBe(killAfter);
        expect(count(cut, "monitor_observation_recorded")).toBe(0);
        // The resumed tick reads the writeback back by its operation id (absent) and writes it once.
        const resumed = advanced(await tickOnce(f));
        expect(resumed.turn.turn_instance_id).toBe("t2");
        expect(resumed.changed).toBe(true);
        const es = await events(f);
        expect(count(es, "monitor_observation_recorded")).toBe(1);
        expect(count(es, "monitor_successor_created")).toBe(1);
        expect(count(es, "todo_added")).toBe(3); // the deferred fix, the monitor and its one successor
        expect(count(es, "turn_bound")).toBe(2);
        const s = await state(f);
        expect(s.spends.map((x) => x.turnId)).toEqual([`${G}/oracle/t1`, `${G}/oracle/t2`]);
        // Another tick: the monitor is not due, nothing more is observed.
        const again = await tickOnce(f);
        expect(again.kind).not.toBe("advanced");
        expect(count(await events(f), "monitor_observation_recorded")).toBe(1);
      } finally {
        await f.store.close();
      }
    });
});

describe("goal tick on a monitor whose poll script lives beside the goal file", () => {
  it("runs `sh watch/inbox.sh` from the goal file's folder; what it reads changing is one material change", async () => {
    const f = await newGoal(5, ["sh", "watch/inbox.sh"]);
    try {
      mkdirSync(join(f.dir, "watch"));
      writeFileSync(join(f.dir, "watch", "inbox.sh"), 'cat "$(dirname "$0")/inbox.txt"\n');
      writeFileSync(join(f.dir, "watch", "inbox.txt"), "inbox empty\n");
      advanced(await tickOnce(f));
      let s = await state(f);
      // The observation is the sha256 of what the script printed (computed here, not by loopgate).
      const sha = (t: string) => `sha256:${createHash("sha256").update(t, "utf8").digest("hex")}`;
      expect(s.monitors[W]?.resultHash).toBe(sha("inbox empty"));
      expect(count(await events(f), "monitor_poll_failed")).toBe(0);
      writeFileSync(join(f.dir, "watch", "inbox.txt"), "inbox empty\nreport: quoted header names\n");
      hours(f, 1);
      expect(advanced(await tickOnce(f)).changed).toBe(true);
      s = await state(f);
      expect(s.monitors[W]?.resultHash).toBe(sha("inbox empty\nreport: quoted header names"));
      expect(s.order.filter((id) => s.todos[id]?.successorOf === W)).toEqual([`${W}_g1`]);
    } finally {
      await f.store.close();
    }
  });
});

/** A person's change of the budget: at most `turns` per 24h window. */
async function capTurns(f: Fixture, turns: number): Promise<void> {
  const read = await events(f);
  const budget = { window_seconds: 86_400, turns_per_window: turns, max_cost_usd: 5 };
  await writeGoal(
    f.store,
    f.localDir,
    G,
    { kind: "command", command: { type: "change_budget", budget, reason: "a tighter quota" } },
    (read.at(-1)?.revision ?? -1) as number,
  );
}

describe("goal tick with the budget spent", () => {
  it("a due monitor is not polled: throttled, nothing bound, polled or spent; with a turn left it is polled", async () => {
    const f = await newGoal();
    try {
      advanced(await tickOnce(f)); // the baseline: one turn spent
      await capTurns(f, 1);
      hours(f, 1.5); // due again, inside the same 24h window
      const before = await events(f);
      const o = await tickOnce(f);
      expect(o.kind, JSON.stringify(o)).toBe("throttled");
      expect(o.kind === "throttled" && o.reason).toMatch(/budget is spent \(turns_per_window\)/);
      expect(o.wake.action).toBe("wait_until");
      const added = (await events(f)).slice(before.length).map((e) => e.type);
      expect(added.filter((t) => !t.startsWith("turn_lease_"))).toEqual([]);
      expect((await state(f)).spends).toHaveLength(1);
      // One more turn in the window: the due poll runs and is the second (and last) spend.
      await capTurns(f, 2);
      expect(advanced(await tickOnce(f)).work).toEqual({ kind: "todo", todo_id: W });
      expect((await state(f)).spends).toHaveLength(2);
    } finally {
      await f.store.close();
    }
  });
});

describe("goal tick on a monitor whose poll fails or whose observation is not well-formed", () => {
  it("a failing poll is recorded as a typed poll failure: no hash, no successor, settled but charged 0 turns", async () => {
    const f = await newGoal(5, ["cat", "no-such-file.txt"]);
    try {
      const o = advanced(await tickOnce(f));
      expect(o.changed).toBe(false);
      const es = await events(f);
      const failed = es.filter((e) => e.type === "monitor_poll_failed");
      expect(failed).toHaveLength(1);
      expect(failed[0]?.data).toMatchObject({
        failure: "exit_nonzero",
        operation_id: `${G}/oracle/t1#durable_writeback`,
      });
      const s = goalState(es);
      expect(s.monitors[W]?.resultHash).toBeNull();
      expect(s.order.filter((id) => s.todos[id]?.successorOf === W)).toEqual([]);
      expect(s.turns[`${G}/oracle/t1`]?.result).toEqual({
        kind: "observation",
        result_hash: "poll_failed:exit_nonzero",
      });
      // It delivered no observation: its spend receipt is there (the turn settled) and charges nothing.
      expect(s.spends.map((x) => x.turns)).toEqual([0]);
      expect(s.monitors[W]?.consecutiveFailures).toBe(1);
    } finally {
      await f.store.close();
    }
  });

  it("an observation that is not well-formed gets no receipt: no writeback, nothing spent, the turn given back", async () => {
    const f = await newGoal();
    try {
      const start = (await events(f)).filter((e) => e.type !== "turn_lease_heartbeat").length;
      const at = start + 4; // lease, bind, prepare host, host executed
      const kill = (before: number, after: number) => {
        if (before < at && at <= after) throw new Error("killed");
      };
      await expect(tickOnce(f, { afterGoalAppend: kill })).rejects.toThrow("killed");
      // The kept observation is tampered with: a hash that is no sha256.
      const dir = join(f.localDir, "goals", G, "turn-effects");
      const [file] = readdirSync(dir);
      const path = join(dir, file as string);
      const kept = JSON.parse(readFileSync(path, "utf8"));
      writeFileSync(path, JSON.stringify({ ...kept, poll: { ok: true, result_hash: "not-a-hash" } }));
      const o = await tickOnce(f);
      expect(o.kind).toBe("failed");
      expect(o.kind === "failed" && o.code).toBe("receipt_missing");
      const es = await events(f);
      expect(count(es, "turn_writeback_accepted")).toBe(0);
      expect(es.filter((e) => e.type.startsWith("monitor_"))).toEqual([]);
      const s = goalState(es);
      expect(s.spends).toEqual([]);
      expect(s.turns[`${G}/oracle/t1`]?.released).toMatch(/receipt_missing/);
    } finally {
      await f.store.close();
    }
  });
});

/** A scripted planner model file (the model boundary is the only fake). */
function script(f: Fixture, responses: unknown[]): string {
  const p = join(f.dir, `planner-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(p, JSON.stringify(responses));
  return `scripted:${p}`;
}

/** A monitor that asks for a replan after one no-change poll: baseline, then no change. */
async function owingReplan(): Promise<Fixture> {
  const f = await newGoal(1);
  advanced(await tickOnce(f));
  hours(f, 2);
  advanced(await tickOnce(f));
  const s = await state(f);
  expect(obligations(s).map((o) => o.kind)).toEqual(["monitor_replan"]);
  return f;
}

describe("goal tick on a replan obligation (planner turn)", () => {
  it("without a planner model it stays idle and names why", async () => {
    const f = await owingReplan();
    try {
      const o = await tickOnce(f);
      expect(o.kind).toBe("idle");
      expect(o.kind === "idle" && o.reason).toMatch(/names no model for its planner turns/);
    } finally {
      await f.store.close();
    }
  });

  it("a delta is admitted in one append and clears the obligation; the planner's usage is spent once", async () => {
    const f = await owingReplan();
    try {
      const model = script(f, [
        {
          tool_calls: [
            {
              name: "propose_todos",
              args: { todos: [{ id: "todo_triage", content: "Triage the reports", class: "user_action" }] },
            },
          ],
          usage: { input_tokens: 100, output_tokens: 20 },
        },
        {
          tool_calls: [
            {
              name: "patch_vision",
              args: { kind: "patch", route: "triage first", patch: "triage", reason: "quiet monitor" },
            },
          ],
          usage: { input_tokens: 30, output_tokens: 10 },
        },
        { text: "done", usage: { input_tokens: 5, output_tokens: 1 } },
      ]);
      const before = (await events(f)).length;
      const o = advanced(await tickOnce(f, { planner: { model } }));
      expect(o.work).toEqual({ kind: "replan", obligation_id: `monitor_replan:${W}` });
      expect(o.changed).toBe(true);
      const es = await events(f);
      const s = goalState(es);
      expect(obligations(s)).toEqual([]);
      expect(s.todos.todo_triage?.class).toBe("user_action");
      const ref = `${G}/oracle/t3#durable_writeback`;
      expect(s.replanOperations[ref]?.outcome).toBe("delta");
      const added = es.slice(before);
      const wb = added.findIndex((e) => e.type === "turn_writeback_accepted");
      const batch = added.slice(wb, wb + 4);
      expect(batch.map((e) => e.type)).toEqual([
        "turn_writeback_accepted",
        "vision_recorded",
        "todo_added",
        "replan_answered",
      ]);
      expect(new Set(batch.map((e) => e.meta.at)).size).toBe(1);
      const spent = s.spends.filter((x) => x.turnId === `${G}/oracle/t3`);
      expect(spent).toHaveLength(1);
      expect(spent[0]).toMatchObject({ turns: 1, tokens: 100 + 20 + 30 + 10 + 5 + 1 });
    } finally {
      await f.store.close();
    }
  });

  it("a kill after the planner turn's host_execute was prepared: readback finds no kept answer, asks once, answers once", async () => {
    const f = await owingReplan();
    try {
      const model = script(f, [
        {
          tool_calls: [
            {
              name: "propose_todos",
              args: { todos: [{ id: "todo_triage", content: "Triage the reports", class: "user_action" }] },
            },
            {
              name: "patch_vision",
              args: { kind: "patch", route: "triage first", patch: "triage", reason: "quiet monitor" },
            },
          ],
          usage: { input_tokens: 10, output_tokens: 2 },
        },
        { text: "done", usage: { input_tokens: 1, output_tokens: 1 } },
      ]);
      const start = (await events(f)).filter((e) => e.type !== "turn_lease_heartbeat").length;
      const at = start + 3; // lease, bind, prepare host
      const kill = (before: number, after: number) => {
        if (before < at && at <= after) throw new Error("killed");
      };
      await expect(tickOnce(f, { planner: { model }, afterGoalAppend: kill })).rejects.toThrow("killed");
      const cut = await events(f);
      expect(
        cut.filter((e) => e.type.startsWith("turn_") && !e.type.startsWith("turn_lease_")).at(-1)?.type,
      ).toBe("turn_effect_prepared");
      // The resumed tick: the host effect is absent (nothing kept), so the planner is asked, once, and
      // its answer is written once.
      const o = advanced(await tickOnce(f, { planner: { model } }));
      expect(o.turn.turn_instance_id).toBe("t3");
      const es = await events(f);
      expect(es.filter((e) => e.type === "turn_effect_readback").map((e) => e.data.found)).toEqual([
        "absent",
      ]);
      expect(count(es, "replan_answered")).toBe(1);
      expect(count(es, "todo_added")).toBe(3); // the deferred fix, the monitor and the planner's one todo
      const s = goalState(es);
      expect(obligations(s)).toEqual([]);
      expect(s.spends.filter((x) => x.turnId === `${G}/oracle/t3`)).toMatchObject([{ tokens: 14 }]);
    } finally {
      await f.store.close();
    }
  });

  it("with the budget spent no planner turn is bound: throttled, the obligation stays, nothing spent", async () => {
    const f = await owingReplan();
    try {
      await capTurns(f, 2); // the two monitor turns owingReplan took
      const model = script(f, [{ text: "never asked", usage: { input_tokens: 1, output_tokens: 1 } }]);
      const o = await tickOnce(f, { planner: { model } });
      expect(o.kind, JSON.stringify(o)).toBe("throttled");
      expect(o.kind === "throttled" && o.reason).toMatch(
        /the planner turn on monitor_replan:.*budget is spent/,
      );
      const s = await state(f);
      expect(s.spends).toHaveLength(2);
      expect(count(await events(f), "turn_bound")).toBe(2);
      expect(obligations(s).map((x) => x.kind)).toEqual(["monitor_replan"]);
    } finally {
      await f.store.close();
    }
  });

  it("the goal file's planner: { model } (a script beside the goal file) answers with no flag and no key", async () => {
    const answer = [
      {
        tool_calls: [
          {
            name: "propose_todos",
            args: { todos: [{ id: "todo_triage", content: "Triage the reports", class: "user_action" }] },
          },
          {
            name: "patch_vision",
            args: { kind: "patch", route: "triage first", patch: "triage", reason: "quiet monitor" },
          },
        ],
        usage: { input_tokens: 20, output_tokens: 3 },
      },
      { text: "done", usage: { input_tokens: 2, output_tokens: 1 } },
    ];
    const f = await newGoal(1, undefined, {
      files: { "planner.json": JSON.stringify(answer) },
      lines: ["planner: { model: scripted:planner.json }"],
    });
    try {
      expect((await state(f)).agent?.planner_model).toBe(`scripted:${join(f.dir, "planner.json")}`);
      advanced(await tickOnce(f));
      hours(f, 2);
      advanced(await tickOnce(f));
      expect(obligations(await state(f)).map((o) => o.kind)).toEqual(["monitor_replan"]);
      // The goal file's planner comes before the builder's --model (a script that is not there: were it
      // asked, the tick would answer idle).
      const builderModel = `scripted:${join(f.dir, "no-such-builder-script.json")}`;
      const o = advanced(await tickOnce(f, { planner: { builderModel } }));
      expect(o.work).toEqual({ kind: "replan", obligation_id: `monitor_replan:${W}` });
      const s = await state(f);
      expect(obligations(s)).toEqual([]);
      expect(s.todos.todo_triage?.class).toBe("user_action");
      expect(s.spends.filter((x) => x.turnId === `${G}/oracle/t3`)).toMatchObject([{ tokens: 26 }]);
    } finally {
      await f.store.close();
    }
  });

  it("goal new refuses a planner whose script is not there, naming the file and the field", async () => {
    await expect(
      newGoal(1, undefined, { lines: ["planner: { model: scripted:missing.json }"] }),
    ).rejects.toThrow(/goal\.yaml: planner\.model: .*missing\.json is not there/);
  });

  it("without a planner of its own, the builder's --model answers (goal tick/run --model)", async () => {
    const f = await owingReplan();
    try {
      const builderModel = script(f, [{ text: "nothing", usage: { input_tokens: 4, output_tokens: 1 } }]);
      const o = advanced(await tickOnce(f, { planner: { builderModel } }));
      expect(o.work).toEqual({ kind: "replan", obligation_id: `monitor_replan:${W}` });
      expect(count(await events(f), "replan_noop_recorded")).toBe(1);
    } finally {
      await f.store.close();
    }
  });

  it("a no-delta answer is replan_noop: recorded, the obligation stays open", async () => {
    const f = await owingReplan();
    try {
      const model = script(f, [{ text: "nothing to change", usage: { input_tokens: 40, output_tokens: 2 } }]);
      const o = advanced(await tickOnce(f, { planner: { model } }));
      expect(o.changed).toBe(false);
      const es = await events(f);
      const s = goalState(es);
      expect(count(es, "replan_noop_recorded")).toBe(1);
      expect(s.replanOperations[`${G}/oracle/t3#durable_writeback`]?.outcome).toBe("replan_noop");
      expect(obligations(s).map((x) => x.kind)).toEqual(["monitor_replan"]);
      expect(s.spends.filter((x) => x.turnId === `${G}/oracle/t3`)).toMatchObject([{ tokens: 42 }]);
    } finally {
      await f.store.close();
    }
  });
});
