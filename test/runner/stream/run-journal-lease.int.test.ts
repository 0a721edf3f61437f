import { describe, expect, it } from "vitest";
import type { EventData } from "../../../src/core/events/loopgate-event.js";
import { LeaseHeldError, leaseOf } from "../../../src/core/run/run-lease.js";
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
const owner = (pid: number) => ({ pid, host: "h", token: `tok-${pid}` });
let n = 0;
const newId = () => `ev-${++n}`;

describe("the run journal and its lease", () => {
  it("heartbeats fired while commands are in flight never race them for a revision", async () => {
    const store = SqliteEventStore.open(":memory:");
    const j = new RunJournal(store, "r", () => new Date(), newId);
    const now = new Date();
    await j.record({ type: "start_run", data: started }, "runtime", {
      type: "take_lease",
      runId: "r",
      owner: owner(1),
      now,
      ttlMs: 30_000,
      ownerGone: false,
    });
    const renew = () =>
      j.recordLease({ type: "renew_lease", runId: "r", token: "tok-1", now: new Date(), ttlMs: 30_000 });
    // Not awaited one by one: the journal must serialise them itself.
    await Promise.all([
      j.record({ type: "start_attempt", requiredFix: null }),
      renew(),
      j.record({ type: "finish_attempt" }),
      renew(),
      j.record({ type: "fail_infrastructure", reason: "x" }),
    ]);
    const stored = await store.readStream(RunJournal.stream("r"));
    expect(stored.map((e) => e.type)).toEqual([
      "run_started",
      "run_lease_taken",
      "attempt_started",
      "run_lease_renewed",
      "attempt_finished",
      "run_lease_renewed",
      "infrastructure_failed",
    ]);
    expect(stored.map((e) => e.revision)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    expect(leaseOf(stored)?.owner.token).toBe("tok-1");
    await store.close();
  });

  it("a second journal on the same stream cannot take a live lease, and appends nothing", async () => {
    const store = SqliteEventStore.open(":memory:");
    const first = new RunJournal(store, "r", () => new Date(), newId);
    await first.record({ type: "start_run", data: started }, "runtime", {
      type: "take_lease",
      runId: "r",
      owner: owner(1),
      now: new Date(),
      ttlMs: 30_000,
      ownerGone: false,
    });
    const events = await store.readStream(RunJournal.stream("r"));
    const second = RunJournal.resume(store, "r", events, () => new Date(), newId);
    await expect(
      second.recordLease({
        type: "take_lease",
        runId: "r",
        owner: owner(2),
        now: new Date(),
        ttlMs: 30_000,
        ownerGone: false,
      }),
    ).rejects.toThrow(LeaseHeldError);
    expect(await store.readStream(RunJournal.stream("r"))).toHaveLength(2);
    await store.close();
  });
});
