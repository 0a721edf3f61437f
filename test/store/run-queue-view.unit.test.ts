import { describe, expect, it } from "vitest";
import type { QueuedJob } from "../../src/store/run-queue.js";
import { jobLine, jobSummary, jobView } from "../../src/store/run-queue-view.js";

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
});
