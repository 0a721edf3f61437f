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
    });
  });
  it("refuses a resume_when that is not machine-readable, naming where", () => {
    expect(() =>
      monitorOf(
        withPoll('run: ["true"], every: 1h, max_no_change_before_replan: 3, resume_when: "when it is quiet"'),
      ),
    ).toThrow(/todos\[\d\]\.poll\.resume_when|not a machine-readable/);
  });
});
