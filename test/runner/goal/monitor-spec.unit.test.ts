import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parseGoalFile } from "../../../src/core/goal/goal-file.js";
import { todoSpec } from "../../../src/runner/goal/goal-spec.js";
import type { LoadedGoal } from "../../../src/runner/goal/load-goal.js";

// A monitor's poll in the goal file: its bounded stop, and resume_when as a stop condition.

const FILE = resolve("examples/goal-csvcol/goal.yaml");
const withPoll = (poll: string) => readFileSync(FILE, "utf8").replace(/poll: \{[^}]*\}/, `poll: { ${poll} }`);
const monitorOf = (text: string) => {
  const goal = parseGoalFile(text, FILE);
  const i = goal.todos.findIndex((t) => t.class === "continuous_monitor");
  const loaded = { goal, file: FILE, tasks: {} } as unknown as LoadedGoal;
  return todoSpec(loaded, goal.todos[i] as (typeof goal.todos)[number], i).monitor;
};

describe("a monitor's poll in the goal file", () => {
  it("maps run/every/timeout/bounds and resume_when (the --until forms)", () => {
    const m = monitorOf(
      withPoll(
        'run: ["sh", "monitor/reports.sh"], every: 1h, max_no_change_before_replan: 3, resume_when: "todo:todo_publish=done"',
      ),
    );
    expect(m).toEqual({
      argv: ["sh", "monitor/reports.sh"],
      cadence_seconds: 3600,
      timeout_seconds: 60,
      max_no_change_before_replan: 3,
      resume_when: { kind: "todo_status", todo_id: "todo_publish", status: "done" },
      // The documented defaults: the wait doubles per quiet poll up to 8 cadences; 3 failed polls stop it.
      backoff: { factor: 2, max_seconds: 8 * 3600 },
      max_failures: 3,
    });
  });
  it("maps a stated backoff and failure bound; factor 1 is a fixed cadence", () => {
    const m = monitorOf(
      withPoll(
        'run: ["true"], every: 10m, max_no_change_before_replan: 3, backoff: { factor: 3, max: 2h }, max_failures: 5',
      ),
    );
    expect(m?.backoff).toEqual({ factor: 3, max_seconds: 7200 });
    expect(m?.max_failures).toBe(5);
    const fixed = monitorOf(
      withPoll('run: ["true"], every: 10m, expires_at: "2027-01-01T00:00:00Z", backoff: { factor: 1 }'),
    );
    expect(fixed?.backoff).toEqual({ factor: 1, max_seconds: 8 * 600 });
  });
  it("must reject: a backoff max shorter than every, a factor below 1, a zero max_failures, naming the field", () => {
    expect(() =>
      monitorOf(
        withPoll(
          'run: ["true"], every: 1h, max_no_change_before_replan: 3, backoff: { factor: 2, max: 10m }',
        ),
      ),
    ).toThrow(/todos\[5\]\.poll\.backoff\.max: backoff\.max \(10m\) is shorter than every \(1h\)/);
    expect(() =>
      monitorOf(
        withPoll('run: ["true"], every: 1h, max_no_change_before_replan: 3, backoff: { factor: 0.5 }'),
      ),
    ).toThrow(/todos\[5\]\.poll\.backoff\.factor/);
    expect(() =>
      monitorOf(withPoll('run: ["true"], every: 1h, max_no_change_before_replan: 3, max_failures: 0')),
    ).toThrow(/todos\[5\]\.poll\.max_failures/);
  });
  it("refuses a resume_when that is not machine-readable, naming where", () => {
    expect(() =>
      monitorOf(
        withPoll('run: ["true"], every: 1h, max_no_change_before_replan: 3, resume_when: "when it is quiet"'),
      ),
    ).toThrow(/todos\[\d\]\.poll\.resume_when|not a machine-readable/);
  });
});
