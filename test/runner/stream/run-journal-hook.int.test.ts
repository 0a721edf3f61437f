import { describe, expect, it } from "vitest";
import type { EventData } from "../../../src/core/events/loopgate-event.js";
import { RunJournal } from "../../../src/runner/stream/run-journal.js";
import { SqliteEventStore } from "../../../src/store/sqlite/sqlite-event-store.js";

const started: EventData<"run_started"> = {
  task_id: "t",
  task_path: "/t/task.yaml",
  task_digest: "d",
  builder: { kind: "noop" },
  max_attempts: 2,
  gates: [{ id: "g", kind: "static" }],
  sandbox: "none",
  run_dir: "/t/runs/r",
};
let n = 0;
const newId = () => `ev-${++n}`;
const lease = {
  type: "take_lease" as const,
  runId: "r",
  owner: { pid: 1, host: "h", token: "tok-1" },
  now: new Date(),
  ttlMs: 30_000,
  ownerGone: false,
};

describe("the run journal's afterAppend hook", () => {
  it("is called after each durable append with the run's event count, lease events not counted", async () => {
    const store = SqliteEventStore.open(":memory:");
    const seen: { count: number; stored: number }[] = [];
    const j: RunJournal = new RunJournal(
      store,
      "r",
      () => new Date(),
      newId,
      [],
      (count) => {
        seen.push({ count, stored: j.events.length });
      },
    );
    await j.record({ type: "start_run", data: started }, "runtime", lease);
    await j.recordLease({ type: "renew_lease", runId: "r", token: "tok-1", now: new Date(), ttlMs: 30_000 });
    await j.record({ type: "start_attempt", requiredFix: null });
    await j.record({ type: "finish_attempt" });
    // run_started (+ its lease event), attempt_started, attempt_finished: 1, 2, 3 run events; the
    // renewal appends no run event and calls nothing.
    expect(seen.map((s) => s.count)).toEqual([1, 2, 3]);
    expect(seen.map((s) => s.stored)).toEqual([2, 4, 5]);
    expect((await store.readStream(RunJournal.stream("r"))).length).toBe(5);
    await store.close();
  });

  it("a journal without a hook ignores the CLI's fault variable: production code has no test door", async () => {
    const store = SqliteEventStore.open(":memory:");
    const before = process.env.LOOPGATE_FAULT_KILL_AFTER_EVENTS;
    // If the journal still read it, this process would be killed (SIGKILL) after the first event.
    process.env.LOOPGATE_FAULT_KILL_AFTER_EVENTS = "1";
    try {
      const j = new RunJournal(store, "r2", () => new Date(), newId);
      await j.record({ type: "start_run", data: started });
      expect(j.events).toHaveLength(1);
    } finally {
      if (before === undefined) delete process.env.LOOPGATE_FAULT_KILL_AFTER_EVENTS;
      else process.env.LOOPGATE_FAULT_KILL_AFTER_EVENTS = before;
      await store.close();
    }
  });
});
