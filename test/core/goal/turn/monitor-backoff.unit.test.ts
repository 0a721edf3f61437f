import { describe, expect, it } from "vitest";
import {
  type MonitorCommand,
  type MonitorEvent,
  type MonitorPolicy,
  monitorDecider,
  pollDelaySeconds,
  reopenMonitor,
  stoppedByFailures,
} from "../../../../src/core/goal/turn/monitor.js";
import { fold } from "../../../support/decider.js";

// A monitor's cadence backs off after quiet polls (no change, or failed) and resets on a change; the
// next_due_at every poll fact records is that rule, so a host that restarts reads the same wake-up.

const T0 = Date.parse("2026-12-01T10:00:00.000Z");
const at = (s: number) => new Date(T0 + s * 1000);
const iso = (s: number) => at(s).toISOString();
/** Every 60 s, doubling per quiet poll, at most 300 s; three failed polls stop it. */
const policy: MonitorPolicy = {
  cadenceSeconds: 60,
  backoffFactor: 2,
  backoffMaxSeconds: 300,
  maxFailures: 3,
};
const armed: MonitorEvent = {
  type: "monitor_armed",
  data: { todo_id: "todo_watch", policy, next_due_at: iso(0) },
};

/** Decides each command on the log so far and appends what it decided; returns the whole log. */
function run(cmds: MonitorCommand[], log: MonitorEvent[] = [armed]): MonitorEvent[] {
  for (const c of cmds) log.push(...monitorDecider.decide(c, fold(monitorDecider, log)));
  return log;
}
const ok = (n: number, s: number, hash: string, more = {}): MonitorCommand => ({
  type: "record_poll",
  operationId: `op${n}`,
  now: at(s),
  resultHash: hash,
  ...more,
});
const failed = (n: number, s: number): MonitorCommand => ({
  type: "record_poll_failure",
  operationId: `op${n}`,
  now: at(s),
  failure: "exit_nonzero",
  exitCode: 3,
  detail: "the poll exited 3",
});
/** Each poll fact's wait: next_due_at minus its own time, in seconds. */
const waits = (log: MonitorEvent[]) =>
  log.flatMap((e) =>
    e.type !== "monitor_armed" && "next_due_at" in e.data
      ? [(Date.parse(e.data.next_due_at) - Date.parse(e.data.at)) / 1000]
      : [],
  );

describe("monitor backoff", () => {
  it("the wait after the k-th quiet poll in a row: 60, then 60·2^(k−1), bounded by 300 (by hand: 60, 60, 120, 240, 300, 300)", () => {
    expect([0, 1, 2, 3, 4, 5].map((k) => pollDelaySeconds(policy, k))).toEqual([60, 60, 120, 240, 300, 300]);
    // factor 1 is a fixed cadence; a max below the cadence never shortens it.
    const fixed = { ...policy, backoffFactor: 1 };
    expect([0, 3, 9].map((k) => pollDelaySeconds(fixed, k))).toEqual([60, 60, 60]);
    expect(pollDelaySeconds({ ...policy, backoffMaxSeconds: 10 }, 2)).toBe(60);
  });

  it("baseline at the cadence; from the second unchanged poll the wait doubles up to the max; a change resets it", () => {
    const log = run([
      ok(1, 0, "h1"), // baseline → 60
      ok(2, 60, "h1"), // quiet 1 → 60
      ok(3, 120, "h1"), // quiet 2 → 120
      ok(4, 240, "h1"), // quiet 3 → 240
      ok(5, 480, "h1"), // quiet 4 → 300 (the max)
      ok(6, 780, "h2", { generation: 1, successor: { todo_id: "todo_look", content: "look" } }), // change → 60
      ok(7, 840, "h2"), // quiet 1 again → 60
    ]);
    expect(waits(log)).toEqual([60, 60, 120, 240, 300, 60, 60]);
    const s = fold(monitorDecider, log);
    expect(s.nextDueAt).toBe(iso(840 + 60));
    expect(s.quietPolls).toBe(1);
  });

  it("failed polls back off too, and count; a successful poll resets the count but not the backoff", () => {
    const log = run([ok(1, 0, "h1"), failed(2, 60), failed(3, 120), ok(4, 240, "h1"), failed(5, 480)]);
    expect(waits(log)).toEqual([60, 60, 120, 240, 300]);
    const f = log.filter((e) => e.type === "monitor_poll_failed");
    expect(f.map((e) => (e.type === "monitor_poll_failed" ? e.data.consecutive_failures : 0))).toEqual([
      1, 2, 1,
    ]);
    const s = fold(monitorDecider, log);
    expect(s.consecutiveFailures).toBe(1);
    expect(stoppedByFailures(s)).toBe(false);
  });

  it("max_failures failed polls in a row stop it; a reopen makes it due at once with the backoff and count reset", () => {
    // A failed first poll is retried at the cadence, then the wait doubles.
    const log = run([failed(1, 0), failed(2, 60), failed(3, 180)]);
    expect(waits(log)).toEqual([60, 120, 240]);
    const s = fold(monitorDecider, log);
    expect(s.consecutiveFailures).toBe(3);
    expect(stoppedByFailures(s)).toBe(true);
    const r = reopenMonitor(s);
    expect(r).toMatchObject({ nextDueAt: "", quietPolls: 0, consecutiveFailures: 0 });
    expect(stoppedByFailures(r)).toBe(false);
  });

  it("before next_due_at nothing is decided (quiet no-op), so a backed-off monitor is not polled early", () => {
    const log = run([ok(1, 0, "h1"), ok(2, 60, "h1"), ok(3, 120, "h1")]); // next due at 240
    expect(monitorDecider.decide(ok(4, 239, "h1"), fold(monitorDecider, log))).toEqual([]);
    expect(monitorDecider.decide(ok(4, 240, "h1"), fold(monitorDecider, log))).toHaveLength(1);
  });

  it("a restart computes the same wake-up: the fold of the recorded facts alone gives next_due_at", () => {
    const log = run([ok(1, 0, "h1"), ok(2, 60, "h1"), failed(3, 120)]);
    const again = fold(monitorDecider, JSON.parse(JSON.stringify(log)) as MonitorEvent[]);
    expect(again.nextDueAt).toBe(iso(120 + 120));
    expect(again).toEqual(fold(monitorDecider, log));
  });
});
