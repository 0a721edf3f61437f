import { describe, expect, it } from "vitest";
import { nextLine } from "../../../../src/cli/commands/goal/goal-format.js";
import { pathStyle, statusJson } from "../../../../src/cli/commands/goal/goal-json.js";
import { closingWords } from "../../../../src/cli/commands/goal/goal-run-drive.js";
import type { GoalView } from "../../../../src/runner/goal/goal-view.js";

// What a person reads while following a goal: the next: line that runs when pasted, paths relative to the
// goal file's folder, and the closing words of a goal run whose last turn closed the goal.

const hints = { me: "node bin/loopgate.js", storeArg: " --store ./st" };
const view = (actions: { argv: string[]; why: string }[], extra: Partial<GoalView> = {}) =>
  ({
    goalId: "g1",
    closed: false,
    nextAction: "fallback",
    todos: [{ id: "todo_next_1" }, { id: "todo_a" }],
    contract: { next_cli_actions: actions },
    ...extra,
  }) as unknown as GoalView;

describe("nextLine", () => {
  it("is the loopgate the user started, the goal's real ids and the --store the command needed", () => {
    expect(
      nextLine(view([{ argv: ["loopgate", "todo", "run", "g1", "todo_a"], why: "run it" }]), hints),
    ).toBe("node bin/loopgate.js todo run g1 todo_a --store ./st  (run it)");
  });

  it("never prints a placeholder: a person's words are a quoted sentence, a new todo a fresh id with its class", () => {
    const close = nextLine(
      view([{ argv: ["loopgate", "goal", "close", "g1", "--rationale", "TEXT"], why: "close" }]),
      hints,
    );
    expect(close).toBe(
      "node bin/loopgate.js goal close g1 --rationale 'why nothing follows' --store ./st  (close; put your own words in the quoted text)",
    );
    const add = nextLine(
      view([{ argv: ["loopgate", "todo", "add", "g1", "TODO_ID", "--content", "TEXT"], why: "a successor" }]),
      hints,
    );
    expect(add).toMatch(
      /^node bin\/loopgate\.js todo add g1 todo_next_2 --content 'what the new todo does' --class advancement_task --store \.\/st /,
    );
    expect(add).not.toMatch(/\b(TODO_ID|TEXT)\b/);
  });

  it("says nothing is left once the goal is closed, and falls back to the sentence with no action", () => {
    expect(
      nextLine(view([{ argv: ["loopgate", "goal", "status", "g1"], why: "x" }], { closed: true }), hints),
    ).toMatch(/^nothing: the goal is closed/);
    expect(nextLine(view([]), hints)).toBe("fallback");
  });
});

describe("pathStyle", () => {
  it("prints a path relative to the goal file's folder; absolute with --absolute or with no goal file", () => {
    const rel = pathStyle("/work/goals/goal.yaml", false);
    expect(rel("/work/goals/tasks/a.yaml")).toBe("tasks/a.yaml");
    expect(rel("/work/store/goals/g1/workspace")).toBe("../store/goals/g1/workspace");
    expect(rel("/work/goals")).toBe(".");
    expect(rel("tasks/already-relative.yaml")).toBe("tasks/already-relative.yaml");
    expect(pathStyle("/work/goals/goal.yaml", true)("/work/goals/tasks/a.yaml")).toBe(
      "/work/goals/tasks/a.yaml",
    );
    expect(pathStyle(null, false)("/work/goals/tasks/a.yaml")).toBe("/work/goals/tasks/a.yaml");
  });

  it("covers every path of goal status --json: workspace, goal file, task files, acceptance refs, the guard", () => {
    const v = {
      workspacePath: "/w/st/goals/g1/workspace",
      sourcePath: "/w/g/goal.yaml",
      todos: [
        { id: "todo_a", task: { path: "/w/g/tasks/a.yaml", task_id: "a", digest: "d" } },
        { id: "todo_b", task: null },
      ],
      contract: { workspace_guard: { workspace: "/w/st/goals/g1/workspace" } },
      acceptance: [{ id: "tasks/a.yaml#gate", ref: "/w/g/tasks/a.yaml#gate", digest: "d", proved: false }],
    } as unknown as GoalView;
    const out = statusJson(v, pathStyle(v.sourcePath, false));
    expect(JSON.stringify(out)).not.toContain('"/w');
    expect(out.todos[0]?.task?.path).toBe("tasks/a.yaml");
    expect(out.acceptance[0]?.ref).toBe("tasks/a.yaml#gate");
    expect(out.contract.workspace_guard.workspace).toBe("../st/goals/g1/workspace");
    expect(out.sourcePath).toBe("goal.yaml");
  });
});

describe("closingWords", () => {
  it("a run whose last turn closed the goal reads closed, with nothing to resume", () => {
    const words = closingWords("g1", "--store ./st", {
      code: 0,
      stop: "terminal",
      why: "terminal closure holds (no_followup)",
      turns: 1,
      last: null,
    });
    expect(words).toMatch(/^goal g1 is closed \(terminal\) after 1 tick\(s\)/);
    expect(words).toMatch(/goal history g1 --store \.\/st/);
    expect(words).not.toMatch(/stopped|resume/);
  });
});
