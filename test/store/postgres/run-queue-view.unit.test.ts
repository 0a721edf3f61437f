import { describe, expect, it } from "vitest";
import { jobLine } from "../../../src/cli/output/job-status.js";
import { QUEUE_POLICY } from "../../../src/store/kernel/queue-policy.js";
import type { QueuedJob, WorkerRow } from "../../../src/store/postgres/run-queue.js";
import { jobSummary, jobView, workerStale } from "../../../src/store/postgres/run-queue-view.js";

const now = new Date("2026-12-01T12:00:00.000Z");
const base: QueuedJob = {
  jobId: "job-1",
  taskPath: "/t/task.yaml",
  taskDigest: "d",
  options: {},
  state: "queued",
  claimedBy: null,
  lockedUntil: null,
  attempts: 0,
  runId: null,
  status: null,
  submittedAt: "2026-12-01T11:00:00.000Z",
  handedBack: null,
  lostClaims: 0,
  deadReason: null,
};
const later = "2026-12-01T12:00:05.000Z";
const earlier = "2026-12-01T11:59:55.000Z";

describe("where a queued job stands", () => {
  it("queued, claimed (no run yet), running, expired and finished", () => {
    expect(jobView(base, now)).toBe("queued");
    const claimed = { ...base, state: "claimed" as const, claimedBy: "w", lockedUntil: later, attempts: 1 };
    expect(jobView(claimed, now)).toBe("claimed");
    expect(jobView({ ...claimed, runId: "r" }, now)).toBe("running");
    expect(jobView({ ...claimed, runId: "r", lockedUntil: earlier }, now)).toBe("expired");
    // A lease that ends exactly now no longer holds (the queue's claim takes `locked_until <= now()`).
    expect(jobView({ ...claimed, lockedUntil: now.toISOString() }, now)).toBe("expired");
    expect(jobView({ ...base, state: "finished", status: "SUCCESS", runId: "r" }, now)).toBe("finished");
  });

  it("names the worker and the lease only while a worker holds (or held) the job", () => {
    expect(jobSummary(base, now)).toMatchObject({ state: "queued", worker: null, lease_expires_at: null });
    const running = { ...base, state: "claimed" as const, claimedBy: "w-1", lockedUntil: later, runId: "r" };
    expect(jobSummary(running, now)).toMatchObject({
      state: "running",
      worker: "w-1",
      lease_expires_at: later,
    });
    expect(jobLine(jobSummary(running, now))).toBe(`running on w-1, lease until ${later} (job job-1)`);
    const gone = { ...running, lockedUntil: earlier };
    expect(jobLine(jobSummary(gone, now))).toContain(`lease of w-1 expired at ${earlier}`);
    const done = { ...base, state: "finished" as const, status: "SUCCESS", runId: "r", attempts: 2 };
    expect(jobSummary(done, now)).toMatchObject({ worker: null, status: "SUCCESS", claims: 2 });
    expect(jobLine(jobSummary(done, now))).toBe("finished: SUCCESS (job job-1, 2 claim(s))");
  });

  it("tells a run from a goal's turn", () => {
    expect(jobSummary(base, now).kind).toBe("run");
    const turn = { ...base, taskPath: "goal:g-1", options: { job_kind: "goal_turn", goal_id: "g-1" } };
    expect(jobSummary(turn, now).kind).toBe("goal_turn");
  });
});

describe("a job handed back by a worker that could not start it", () => {
  const back = {
    ...base,
    attempts: 3,
    handedBack: { times: 3, reason: "the work folder /x is not usable", by: "w-bad", at: earlier },
  };

  it("stays queued and says how often, by whom, when and why", () => {
    expect(jobSummary(back, now)).toMatchObject({
      state: "queued",
      worker: null,
      claims: 3,
      handed_back: { times: 3, last_reason: "the work folder /x is not usable", last_worker: "w-bad" },
    });
    expect(jobLine(jobSummary(back, now))).toBe(
      `queued since ${base.submittedAt} (job job-1; handed back 3 time(s), last by w-bad at ${earlier}: the work folder /x is not usable)`,
    );
  });

  it("keeps its history once another worker finished it", () => {
    const done = { ...back, state: "finished" as const, status: "SUCCESS", runId: "r", attempts: 4 };
    expect(jobLine(jobSummary(done, now))).toBe(
      `finished: SUCCESS (job job-1, 4 claim(s); handed back 3 time(s), last by w-bad at ${earlier}: the work folder /x is not usable)`,
    );
  });

  it("a job never handed back has no hand-back entry", () => {
    expect(jobSummary(base, now)).not.toHaveProperty("handed_back");
  });
});

describe("a worker whose heartbeat is overdue", () => {
  // Beats every 10 s, present for 30 s: stale once 2 beats (20 s) passed without one.
  const w: WorkerRow = {
    workerId: "w-1",
    host: "h",
    pid: 1,
    concurrency: 1,
    startedAt: "2026-12-01T11:00:00.000Z",
    seenUntil: "2026-12-01T12:00:10.000Z",
    seenAt: "2026-12-01T11:59:40.000Z",
    beatMs: 10_000,
  };

  it("is live up to staleAfterBeats intervals after its last heartbeat, stale past them or its presence", () => {
    const at = (s: string) => new Date(`2026-12-01T${s}Z`);
    const fresh = { ...w, seenAt: "2026-12-01T11:59:50.000Z", seenUntil: "2026-12-01T12:00:20.000Z" };
    expect(workerStale(fresh, at("12:00:00.000"))).toBe(false); // 10 s: one beat
    expect(workerStale(fresh, at("12:00:10.000"))).toBe(false); // 20 s: exactly two beats
    expect(workerStale(fresh, at("12:00:10.001"))).toBe(true); // past two beats
    expect(workerStale(fresh, at("12:00:00.000"), { ...QUEUE_POLICY, staleAfterBeats: 0.5 })).toBe(true);
    expect(workerStale(fresh, at("12:00:20.000"))).toBe(true); // presence ran out
  });

  it("a worker that promised no interval is judged by its presence alone", () => {
    const old = { ...w, seenAt: null, beatMs: null };
    expect(workerStale(old, now)).toBe(false);
    expect(workerStale(old, new Date("2026-12-01T12:00:10.000Z"))).toBe(true);
  });

  it("a job a stale worker holds says so; an expired one is already said to be taken over", () => {
    const held = { ...base, state: "claimed" as const, claimedBy: "w-1", lockedUntil: later, runId: "r" };
    const s = jobSummary(held, now, new Set(["w-1"]));
    expect(s.worker_stale).toBe(true);
    expect(jobLine(s)).toBe(
      `running on w-1 (stale: its heartbeat is overdue), lease until ${later} (job job-1)`,
    );
    expect(jobSummary(held, now, new Set(["w-2"]))).not.toHaveProperty("worker_stale");
    const expired = { ...held, lockedUntil: earlier };
    expect(jobSummary(expired, now, new Set(["w-1"]))).not.toHaveProperty("worker_stale");
  });
});
