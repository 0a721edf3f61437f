import { describe, expect, it } from "vitest";
import { jobExitCode, jobStatusWord } from "../../../src/cli/output/job-status.js";
import type { JobSummary } from "../../../src/store/postgres/run-queue-view.js";

const job = (state: JobSummary["state"], status?: string): JobSummary => ({
  job_id: "job-1",
  kind: "run",
  state,
  worker: state === "queued" || state === "finished" ? null : "w-1",
  lease_expires_at: null,
  claims: 1,
  run_id: null,
  task_path: "/t/task.yaml",
  submitted_at: "2026-12-01T11:00:00.000Z",
  ...(status !== undefined ? { status } : {}),
});

// `status JOB` of a job without a run: the word printed and the exit code say the same thing
// (README: 0 SUCCESS, 1 ESCALATED, 2 TOOL_FAILURE or bad input, 3 not finished).
describe("a job's status word and exit code agree", () => {
  it.each([
    ["queued", "QUEUED"],
    ["claimed", "CLAIMED"],
    ["running", "RUNNING"],
    ["expired", "EXPIRED"],
  ] as const)("%s: %s, exit 3 (not finished)", (state, word) => {
    expect(jobStatusWord(job(state))).toBe(word);
    expect(jobExitCode(job(state))).toBe(3);
  });

  it("finished as refused (a bad task): REFUSED, exit 2, never 3", () => {
    const j = job("finished", "REFUSED: /t/task.yaml: judge: no judge model");
    expect(jobStatusWord(j)).toBe("REFUSED");
    expect(jobExitCode(j)).toBe(2);
  });

  it("finished with a run's verdict: as the run exits", () => {
    expect([jobExitCode(job("finished", "SUCCESS")), jobStatusWord(job("finished", "SUCCESS"))]).toEqual([
      0,
      "SUCCESS",
    ]);
    expect(jobExitCode(job("finished", "ESCALATED"))).toBe(1);
    expect(jobExitCode(job("finished", "TOOL_FAILURE"))).toBe(2);
  });

  it("a goal's turn as `goal tick` exits: 0 advanced or terminal, 2 failed, 1 otherwise", () => {
    expect(jobStatusWord(job("finished", "GOAL_TURN advanced"))).toBe("GOAL_TURN");
    expect(jobExitCode(job("finished", "GOAL_TURN advanced"))).toBe(0);
    expect(jobExitCode(job("finished", "GOAL_TURN terminal"))).toBe(0);
    expect(jobExitCode(job("finished", "GOAL_TURN failed (receipt_missing)"))).toBe(2);
    expect(jobExitCode(job("finished", "GOAL_TURN idle: idle"))).toBe(1);
  });

  it("finished with nothing recorded reads `?` and is not a success", () => {
    expect(jobStatusWord(job("finished"))).toBe("?");
    expect(jobExitCode(job("finished"))).toBe(2);
  });
});
