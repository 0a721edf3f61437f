import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TodoSpec } from "../../../src/core/events/goal/goal-events.js";
import { monitorPollCommand } from "../../../src/core/goal/monitor-goal.js";
import { DomainError } from "../../../src/core/kernel/errors.js";
import { goalState } from "../../../src/runner/goal/goal-engine.js";
import { writeGoal } from "../../../src/runner/goal/goal-service.js";
import { appendGoal, goalStream, readGoal } from "../../../src/runner/goal/goal-store.js";
import { observeMonitor } from "../../../src/runner/goal/monitor-poll.js";
import { SqliteEventStore } from "../../../src/store/sqlite/sqlite-event-store.js";
import { adv, created, spec } from "../../core/goal/goal-fixtures.js";

// A monitor turn end to end below the CLI: a real poll in bubblewrap, the goal command it becomes, and the
// append in a real SQLite store. A material change is ONE append (observation + successor todo); the same
// operation id again writes nothing.

let root: string;
let store: SqliteEventStore;
const W = "todo_watch";
const watch: TodoSpec = {
  id: W,
  content: "watch reports",
  class: "continuous_monitor",
  monitor: {
    argv: ["cat", "reports.txt"],
    cadence_seconds: 60,
    timeout_seconds: 10,
    max_no_change_before_replan: 5,
  },
};
const G = "goal_csv";
const at = (min: number) => new Date(Date.parse("2026-12-01T10:00:00.000Z") + min * 60_000).toISOString();

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "lg-monitor-append-"));
  store = SqliteEventStore.open(join(root, "events.db"));
  await appendGoal(store, G, created(spec([adv("todo_main"), watch])), "no_stream", () => "operator");
});
afterAll(async () => {
  await store.close();
  await rm(root, { recursive: true, force: true });
});

async function pollAndWrite(opId: string, minute: number) {
  const log = await readGoal(store, root, G);
  const state = goalState(log.events);
  const { command } = await observeMonitor(state, W, opId, new Date(at(minute)), root, {
    sandbox: "bubblewrap",
  });
  return writeGoal(store, root, G, { kind: "command", command }, log.revision, false);
}

describe("a monitor turn's writeback", () => {
  it("baseline, no change, then a change: observation and successor in one append; a retry writes nothing", async () => {
    await writeFile(join(root, "reports.txt"), "no reports\n");
    expect((await pollAndWrite("op1", 0)).events).toEqual(["monitor_baseline_recorded"]);
    expect((await pollAndWrite("op2", 1)).events).toEqual(["monitor_no_change_recorded"]);
    await writeFile(join(root, "reports.txt"), "report: CRLF input breaks the last column\n");
    const before = (await readGoal(store, root, G)).revision;
    const change = await pollAndWrite("op3", 2);
    expect(change.events).toEqual([
      "monitor_observation_recorded",
      "todo_added",
      "monitor_successor_created",
    ]);
    expect(change.revision).toBe(before + 3);
    const recorded = await store.readStream(goalStream(G));
    const batch = recorded.slice(-3);
    expect(new Set(batch.map((e) => e.meta.at)).size).toBe(1);
    expect(batch.map((e) => e.meta.origin)).toEqual(["runtime", "runtime", "runtime"]);
    // The same operation again (a retry after a crash): nothing is decided, nothing is written.
    const log = await readGoal(store, root, G);
    const state = goalState(log.events);
    const retry = monitorPollCommand(state, W, "op3", new Date(at(2)), {
      ok: true,
      result_hash: "sha256:other",
    });
    await expect(
      writeGoal(store, root, G, { kind: "command", command: retry }, log.revision, false),
    ).rejects.toThrow(DomainError);
    const after = goalState((await readGoal(store, root, G)).events);
    expect(after.todos[W]?.successors).toEqual(["todo_watch_g1"]);
    expect(after.monitors[W]?.materialChangeGeneration).toBe(1);
    // Polling the same evidence again is a no-change, never new work.
    expect((await pollAndWrite("op4", 3)).events).toEqual(["monitor_no_change_recorded"]);
  }, 60_000);
});
