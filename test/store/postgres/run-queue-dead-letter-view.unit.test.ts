// How a dead-lettered job (the queue finished it after too many lost claims) and a job that lost claims
// below the cap read in `runs`, `status` and their --json.
import { describe, expect, it } from "vitest";
import { jobExitCode, jobLine, jobStatusWord } from "../../../src/cli/output/job-status.js";
import type { QueuedJob } from "../../../src/store/postgres/run-queue.js";
import { jobSummary } from "../../../src/store/postgres/run-queue-view.js";

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
const reason = "its worker was lost 3 time(s) (…)";

describe("a dead-lettered job", () => {
  const dead: QueuedJob = {
    ...base,
    state: "finished",
    status: "TOOL_FAILURE",
    runId: "r-1",
    attempts: 3,
    lostClaims: 3,
    deadReason: reason,
  };

  it("is finished as TOOL_FAILURE, and its JSON carries the reason and the lost claims", () => {
    const j = jobSummary(dead, now);
    expect(j).toMatchObject({
      state: "finished",
      status: "TOOL_FAILURE",
      dead_letter: reason,
      lost_claims: 3,
    });
    expect(jobStatusWord(j)).toBe("TOOL_FAILURE");
    expect(jobExitCode(j)).toBe(2);
  });

  it("reads as a dead letter with its reason", () => {
    expect(jobLine(jobSummary(dead, now))).toBe(
      `finished: TOOL_FAILURE (dead letter: ${reason}) (job job-1, 3 claim(s))`,
    );
  });
});

describe("a job that lost claims below the cap", () => {
  it("says how many while it waits, and once it finished", () => {
    const expired = {
      ...base,
      state: "claimed" as const,
      claimedBy: "w-2",
      lockedUntil: "2026-12-01T11:59:55.000Z",
      attempts: 2,
      lostClaims: 1,
    };
    expect(jobSummary(expired, now)).toMatchObject({ state: "expired", lost_claims: 1 });
    expect(jobLine(jobSummary(expired, now))).toBe(
      "lease of w-2 expired at 2026-12-01T11:59:55.000Z; the next worker takes it over (job job-1; 1 lost claim(s) (lease expired))",
    );
    const done = { ...expired, state: "finished" as const, status: "SUCCESS", lostClaims: 2, attempts: 3 };
    expect(jobSummary(done, now)).not.toHaveProperty("dead_letter");
    expect(jobLine(jobSummary(done, now))).toBe(
      "finished: SUCCESS (job job-1, 3 claim(s); 2 lost claim(s) (lease expired))",
    );
  });

  it("a job that never lost a claim shows no count", () => {
    expect(jobSummary(base, now)).not.toHaveProperty("lost_claims");
    expect(jobSummary(base, now)).not.toHaveProperty("dead_letter");
  });
});
