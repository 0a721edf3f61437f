// The one duration grammar: every unit everywhere, a named limit, and the places that read durations.
import { describe, expect, it } from "vitest";
import { parseGoalFile } from "../../../src/core/goal/goal-file.js";
import {
  durationProblem,
  formatDuration,
  MAX_DURATION_MS,
  parseDuration,
} from "../../../src/core/kernel/duration.js";
import { InputError } from "../../../src/core/kernel/errors.js";
import { parseAge } from "../../../src/core/run/gc-plan.js";
import { parseTask } from "../../../src/core/task/task.js";
import { parseManifest } from "../../../src/experiments/manifest.js";

const SECOND = 1000;
const HOUR = 3600 * SECOND;
const DAY = 24 * HOUR;

describe("parseDuration", () => {
  it("reads ms, s, m, h, d and w, and a bare number as seconds", () => {
    expect(parseDuration("500ms")).toBe(500);
    expect(parseDuration("30s")).toBe(30 * SECOND);
    expect(parseDuration("5m")).toBe(300 * SECOND);
    expect(parseDuration("2h")).toBe(2 * HOUR);
    expect(parseDuration("1d")).toBe(DAY);
    expect(parseDuration("1.5d")).toBe(36 * HOUR);
    expect(parseDuration("2w")).toBe(14 * DAY);
    expect(parseDuration("45")).toBe(45 * SECOND);
    expect(parseDuration(45)).toBe(45 * SECOND);
    expect(parseDuration(" 600h ")).toBe(600 * HOUR);
  });

  it("refuses malformed, zero and negative values", () => {
    for (const bad of ["soon", "", "1y", "d", "-1d", "1 day", "1e3s", "0s", "0"])
      expect(parseDuration(bad), bad).toBeNull();
    for (const bad of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) expect(parseDuration(bad)).toBeNull();
  });

  it("accepts up to 365 days and names the limit beyond it", () => {
    expect(MAX_DURATION_MS).toBe(365 * DAY);
    expect(parseDuration("365d")).toBe(365 * DAY);
    expect(parseDuration("8760h")).toBe(365 * DAY);
    expect(parseDuration("366d")).toBeNull();
    expect(parseDuration(365 * 86_400 + 1)).toBeNull();
    expect(durationProblem("366d")).toBe('"366d" is longer than the limit of 365d');
    expect(durationProblem("600h")).toBeNull();
  });

  it("with options: a unit required, zero allowed, another limit", () => {
    const age = { unitRequired: true, zeroAllowed: true, maxMs: 1000 * DAY };
    expect(parseDuration("0s", age)).toBe(0);
    expect(parseDuration("7", age)).toBeNull();
    expect(parseDuration(7, age)).toBeNull();
    expect(parseDuration("500d", age)).toBe(500 * DAY);
    expect(durationProblem("1001d", age)).toBe('"1001d" is longer than the limit of 1000d');
  });

  it("formats a limit in the largest exact unit", () => {
    expect(formatDuration(365 * DAY)).toBe("365d");
    expect(formatDuration(14 * DAY)).toBe("2w");
    expect(formatDuration(90 * 60 * SECOND)).toBe("90m");
    expect(formatDuration(1500)).toBe("1500ms");
  });
});

/** The message of the InputError `parse` throws. */
function refusal(parse: () => unknown): string {
  try {
    parse();
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    return (e as Error).message;
  }
  throw new Error("accepted");
}

const task = (timeout: string) => `id: t
prompt: p
workspace: ./repo
gates:
  - id: g
    run: ["true"]
    timeout: ${timeout}
judge: { rules: [r], timeout: 1d }
budget: { wall_time: 1d }
builder: { timeout: 1d }
`;

describe("1d is a duration everywhere durations are read", () => {
  it("task files: gate, judge, builder timeouts and the wall-time budget", () => {
    const t = parseTask(task("1d"), "task.yaml");
    const gate = t.gates[0];
    expect(gate && "run" in gate ? parseDuration(gate.timeout) : null).toBe(DAY);
    expect(parseDuration(t.judge?.timeout ?? "")).toBe(DAY);
    expect(parseDuration(t.builder.timeout)).toBe(DAY);
    expect(parseDuration(t.budget.wall_time ?? "")).toBe(DAY);
  });

  it("a task file over the limit is refused naming file:line:field and the limit", () => {
    const msg = refusal(() => parseTask(task("400d"), "task.yaml"));
    expect(msg).toContain('task.yaml:7: gates[0].timeout: expected a duration of at most 365d, got "400d"');
    // 600h (25 days, past setTimeout's 24.8-day limit) is a legitimate timeout.
    expect(() => parseTask(task("600h"), "task.yaml")).not.toThrow();
  });

  it("goal files: a monitor's cadence and the budget window", () => {
    const goal = parseGoalFile(
      `id: g1
objective: o
workspace: ./repo
acceptance:
  - { task: t.yaml }
budget: { window: 2d }
todos:
  - id: todo_watch
    class: continuous_monitor
    content: watch
    poll: { run: ["true"], every: 1d, max_no_change_before_replan: 3 }
`,
      "goal.yaml",
    );
    expect(parseDuration(goal.budget.window)).toBe(2 * DAY);
    expect(parseDuration(goal.todos[0]?.poll?.every ?? "")).toBe(DAY);
  });

  it("experiment manifests' gate timeouts", () => {
    const m = parseManifest(
      `name: e
arms:
  - { id: a, builder: { noop: true } }
tasks:
  - { id: t, task: t.yaml, gate_timeout: 2d }
gate_timeout: 1d
`,
      "exp.yaml",
    );
    expect(parseDuration(m.manifest.gate_timeout ?? "")).toBe(DAY);
    expect(parseDuration(m.manifest.tasks[0]?.gate_timeout ?? "")).toBe(2 * DAY);
  });

  it("gc ages", () => {
    expect(parseAge("1d")).toBe(DAY);
  });
});
