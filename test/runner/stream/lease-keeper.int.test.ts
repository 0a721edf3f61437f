// The one lease keeper, driven by vitest's fake timers and a scripted renew callback: it renews on its
// beat, never piles renewals up, retries a transient store error a bounded number of times in a row, and
// never stops on its own without aborting its signal and saying why. A run's keeper over a real journal
// closes it: a takeover by another process is reported, not swallowed.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { EventData } from "../../../src/core/events/loopgate-event.js";
import { ConcurrencyError } from "../../../src/core/kernel/errors.js";
import {
  keepLeaseAlive,
  type LeaseLoss,
  type Renewal,
  renewEvery,
} from "../../../src/runner/stream/lease-keeper.js";
import { RunJournal } from "../../../src/runner/stream/run-journal.js";
import { keepLease } from "../../../src/runner/stream/run-lease-keeper.js";
import { StoreBusyError } from "../../../src/store/kernel/store-errors.js";
import { SqliteEventStore } from "../../../src/store/sqlite/sqlite-event-store.js";

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

const HELD: Renewal = { held: true };
const busy = () => new StoreBusyError("/s/events.db", 5000);

/** A keeper over a renew callback that answers from `script` in turn (then HELD), counting its calls. */
function keeper(script: (() => Promise<Renewal>)[], over: { idle?: () => boolean } = {}) {
  const losses: LeaseLoss[] = [];
  let calls = 0;
  const k = keepLeaseAlive({
    everyMs: 1000,
    renew: () => {
      const next = script[calls++];
      return next ? next() : Promise.resolve(HELD);
    },
    onLost: (loss) => losses.push(loss),
    ...over,
  });
  return { k, losses, calls: () => calls };
}

describe("the lease keeper", () => {
  it("renews once a beat, and nothing after stop()", async () => {
    const { k, losses, calls } = keeper([]);
    await vi.advanceTimersByTimeAsync(999);
    expect(calls()).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls()).toBe(1);
    await vi.advanceTimersByTimeAsync(2000);
    expect(calls()).toBe(3);
    k.stop();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls()).toBe(3);
    expect(losses).toEqual([]);
    expect(k.signal.aborted).toBe(false);
  });

  it("a lost lease aborts the signal with the reason, is told once, and ends the renewals", async () => {
    const why = new Error("taken over by process 7");
    const { k, losses, calls } = keeper([async () => HELD, async () => ({ held: false, why })]);
    await vi.advanceTimersByTimeAsync(2000);
    expect(losses).toEqual([{ kind: "lost", why }]);
    expect(k.signal.aborted).toBe(true);
    expect(k.signal.reason).toBe(why);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(calls()).toBe(2);
    expect(losses).toHaveLength(1);
  });

  it("a transient store error is retried twice in a row; a renewal that holds starts the count again", async () => {
    const fail = async (): Promise<Renewal> => {
      throw busy();
    };
    const { k, losses, calls } = keeper([fail, fail, async () => HELD, fail, fail]);
    await vi.advanceTimersByTimeAsync(6000);
    expect(calls()).toBe(6);
    expect(losses).toEqual([]);
    expect(k.signal.aborted).toBe(false);
    k.stop();
  });

  it("a third transient error in a row is a loss, reported with that error", async () => {
    const errors = [busy(), busy(), busy()];
    const { k, losses, calls } = keeper(
      errors.map((e) => async () => {
        throw e;
      }),
    );
    await vi.advanceTimersByTimeAsync(2000);
    expect(losses).toEqual([]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(losses).toEqual([{ kind: "failed", why: errors[2] }]);
    expect(k.signal.reason).toBe(errors[2]);
    await vi.advanceTimersByTimeAsync(5000);
    expect(calls()).toBe(3);
  });

  it("an error that is not transient is a loss at once", async () => {
    const broken = new Error("disk full");
    const { k, losses } = keeper([
      async () => {
        throw broken;
      },
    ]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(losses).toEqual([{ kind: "failed", why: broken }]);
    expect(k.signal.aborted).toBe(true);
  });

  it("a beat that comes while a renewal is under way is skipped: renewals never pile up", async () => {
    let answer: (r: Renewal) => void = () => {};
    const slow = () => new Promise<Renewal>((r) => (answer = r));
    const { k, calls } = keeper([slow]);
    await vi.advanceTimersByTimeAsync(4000);
    expect(calls()).toBe(1);
    answer(HELD);
    await vi.advanceTimersByTimeAsync(1000);
    expect(calls()).toBe(2);
    k.stop();
  });

  it("while idle, beats renew nothing", async () => {
    let idle = true;
    const { k, calls } = keeper([], { idle: () => idle });
    await vi.advanceTimersByTimeAsync(3000);
    expect(calls()).toBe(0);
    idle = false;
    await vi.advanceTimersByTimeAsync(1000);
    expect(calls()).toBe(1);
    k.stop();
  });

  it("a renewal that ends after stop() reports nothing: the owner was done with the lease", async () => {
    let answer: (r: Renewal) => void = () => {};
    const { k, losses } = keeper([() => new Promise<Renewal>((r) => (answer = r))]);
    await vi.advanceTimersByTimeAsync(1000);
    k.stop();
    answer({ held: false, why: "late" });
    await vi.advanceTimersByTimeAsync(1000);
    expect(losses).toEqual([]);
    expect(k.signal.aborted).toBe(false);
  });

  it("renews every third of a lease: 10 s for 30 s, 20 s for 60 s, never more often than its floor", () => {
    expect(renewEvery(30_000)).toBe(10_000);
    expect(renewEvery(60_000)).toBe(20_000);
    expect(renewEvery(3_000)).toBe(1_000);
    expect(renewEvery(150)).toBe(100);
    expect(renewEvery(900, 250)).toBe(300);
    expect(renewEvery(600, 250)).toBe(250);
  });
});

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

describe("a run's lease keeper", () => {
  it("renews the run's lease on its beat; a takeover is reported as lost, never silently", async () => {
    const store = SqliteEventStore.open(":memory:");
    const owner = { pid: 1, host: "h", token: "tok-1" };
    const j = new RunJournal(store, "r", () => new Date(), newId);
    await j.record({ type: "start_run", data: started }, "runtime", {
      type: "take_lease",
      runId: "r",
      owner,
      now: new Date(),
      ttlMs: 3000,
      ownerGone: false,
    });
    const lost: unknown[] = [];
    const k = keepLease(j, owner, (e) => lost.push(e), 3000);
    await vi.advanceTimersByTimeAsync(2000);
    const types = async () => (await store.readStream(RunJournal.stream("r"))).map((e) => e.type);
    expect((await types()).filter((t) => t === "run_lease_renewed")).toHaveLength(2);
    // Another process takes the run over once the lease has run out (this owner stopped renewing).
    k.stop();
    const other = RunJournal.resume(
      store,
      "r",
      await store.readStream(RunJournal.stream("r")),
      () => new Date(),
      newId,
    );
    await vi.advanceTimersByTimeAsync(3001);
    await other.recordLease({
      type: "take_lease",
      runId: "r",
      owner: { pid: 2, host: "h", token: "tok-2" },
      now: new Date(),
      ttlMs: 3000,
      ownerGone: false,
    });
    expect(lost).toEqual([]);
    const again = keepLease(j, owner, (e) => lost.push(e), 3000);
    await vi.advanceTimersByTimeAsync(1000);
    expect(lost).toHaveLength(1);
    expect(lost[0]).toBeInstanceOf(ConcurrencyError);
    expect(again.signal.aborted).toBe(true);
    expect(again.signal.reason).toBe(lost[0]);
    await vi.advanceTimersByTimeAsync(5000);
    expect((await types()).at(-1)).toBe("run_lease_taken");
    await store.close();
  });

  it("once the run is finished, its keeper renews nothing and reports nothing", async () => {
    const store = SqliteEventStore.open(":memory:");
    const owner = { pid: 1, host: "h", token: "tok-1" };
    const j = new RunJournal(store, "r", () => new Date(), newId);
    await j.record({ type: "start_run", data: started }, "runtime", {
      type: "take_lease",
      runId: "r",
      owner,
      now: new Date(),
      ttlMs: 3000,
      ownerGone: false,
    });
    const lost: unknown[] = [];
    const k = keepLease(j, { ...owner, token: "not-the-holder" }, (e) => lost.push(e), 3000);
    await j.record({ type: "fail_infrastructure", reason: "x" });
    await j.record({ type: "finish_run" });
    const before = (await store.readStream(RunJournal.stream("r"))).length;
    await vi.advanceTimersByTimeAsync(5000);
    expect(lost).toEqual([]);
    expect(k.signal.aborted).toBe(false);
    expect(await store.readStream(RunJournal.stream("r"))).toHaveLength(before);
    k.stop();
    await store.close();
  });
});
