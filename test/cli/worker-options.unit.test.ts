import { hostname } from "node:os";
import { describe, expect, it } from "vitest";
import { workerLine, workerOptionsFrom } from "../../src/cli/commands/worker.js";
import { InputError } from "../../src/core/kernel/errors.js";

// `loopgate worker`'s flags, parsed once into the worker's options (runner/host/worker-host.ts).
describe("workerOptionsFrom", () => {
  it("defaults: one job at a time, a 30 s lease, an id of this host and process", () => {
    expect(workerOptionsFrom({})).toEqual({
      concurrency: 1,
      id: `${hostname()}-${process.pid}`,
      once: false,
      untilIdle: false,
      leaseMs: 30_000,
      workDir: undefined,
    });
  });
  it("reads every flag", () => {
    expect(
      workerOptionsFrom({ concurrency: 3, id: "w-1", "until-idle": true, lease: "2m", "work-dir": "/w" }),
    ).toEqual({ concurrency: 3, id: "w-1", once: false, untilIdle: true, leaseMs: 120_000, workDir: "/w" });
  });
  it("refuses --once with --until-idle, a lease under a second, an id with a space", () => {
    expect(() => workerOptionsFrom({ once: true, "until-idle": true })).toThrow(InputError);
    expect(() => workerOptionsFrom({ lease: "500ms" })).toThrow(/at least 1s/);
    expect(() => workerOptionsFrom({ lease: "soon" })).toThrow(/at least 1s/);
    expect(() => workerOptionsFrom({ id: "w 1" })).toThrow(/a worker id is 1 to 100/);
  });
});

describe("workerLine: the worker's events as its stderr lines", () => {
  it("a claim, a finish, a local failure", () => {
    expect(workerLine({ kind: "claimed", jobId: "job_1", attempt: 2, runId: "run_9" })).toBe(
      "claimed job_1 (attempt 2, run run_9)",
    );
    expect(workerLine({ kind: "finished", jobId: "job_1", status: "SUCCESS" })).toBe(
      "finished job_1: SUCCESS",
    );
    expect(workerLine({ kind: "local_failure", jobId: "job_2", inRow: 1, reason: "no sandbox" })).toBe(
      "could not start job_2 on this machine (1 in a row): no sandbox; handed it back to the queue",
    );
  });
});
