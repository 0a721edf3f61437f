// record_agent with `more`: a mutating call's result and the observation of its change, in one append.
import { describe, expect, it } from "vitest";
import { DomainError } from "../../../src/core/kernel/errors.js";
import { decide, type EventBody, foldRun } from "../../../src/core/run/run-decider.js";

const given: EventBody[] = [
  {
    type: "run_started",
    data: {
      task_id: "t",
      task_path: "/t/task.yaml",
      task_digest: "d",
      builder: { kind: "agent", command: "scripted:x" },
      max_attempts: 2,
      gates: [{ id: "a", kind: "subprocess" }],
      sandbox: "bubblewrap",
      run_dir: "/r",
    },
  },
  { type: "attempt_started", data: { attempt: 1, required_fix: null } },
];
const finished = {
  type: "tool_call_finished" as const,
  data: {
    attempt: 1,
    call_id: "c1",
    name: "write_file",
    valid: true,
    is_error: false,
    exit_code: null,
    subject: "a.js",
    content: "wrote a.js",
    duration_ms: 1,
  },
};
const touched = (attempt: number) => ({
  type: "workspace_touched" as const,
  data: { attempt, call_id: "c1", observation_id: "f".repeat(64) },
});

describe("record_agent with more events", () => {
  it("decides the event and the ones after it, in order, as one batch", () => {
    expect(decide({ type: "record_agent", event: finished, more: [touched(1)] }, foldRun(given))).toEqual([
      finished,
      touched(1),
    ]);
  });

  it("refuses the whole batch when one of them names another attempt", () => {
    expect(() =>
      decide({ type: "record_agent", event: finished, more: [touched(2)] }, foldRun(given)),
    ).toThrow(DomainError);
  });
});
