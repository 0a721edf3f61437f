import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseGoalFile } from "../../../src/core/goal/goal-file.js";

const BASE = `id: g1
objective: make it work
workspace: ./repo
acceptance:
  - { task: t.yaml }
todos:
`;
const advancement = "  - { id: todo_fix, class: advancement_task, content: fix it, task: t.yaml }\n";

/** The message of the InputError parseGoalFile throws for `text`. */
function refused(text: string): string {
  try {
    parseGoalFile(text, "goal.yaml");
  } catch (e) {
    expect((e as Error).name).toBe("InputError");
    return (e as Error).message;
  }
  throw new Error(`accepted:\n${text}`);
}

describe("parseGoalFile", () => {
  it("accepts the bundled example and keeps its todos in order", () => {
    const file = join("examples", "goal-csvcol", "goal.yaml");
    const goal = parseGoalFile(readFileSync(file, "utf8"), file);
    expect(goal.id).toBe("csvcol-rfc4180");
    expect(goal.todos.map((t) => t.id)).toEqual([
      "todo_quoted_fields",
      "todo_crlf",
      "todo_unknown_column",
      "todo_publish_gate",
      "todo_publish",
      "todo_watch_reports",
    ]);
    expect(goal.acceptance).toHaveLength(3);
    expect(goal.builder).toBe("oracle");
  });

  it("fills the defaults: a 24h budget window, no dependencies, no required scopes", () => {
    const goal = parseGoalFile(BASE + advancement, "goal.yaml");
    expect(goal.budget).toEqual({ window: "24h" });
    expect(goal.todos[0]?.depends_on).toEqual([]);
    expect(goal.todos[0]?.required_decision_scopes).toEqual([]);
  });

  it("names file:line:field for a bad todo id", () => {
    const m = refused(`${BASE}  - { id: fix, class: advancement_task, content: x, task: t.yaml }\n`);
    expect(m).toMatch(/goal\.yaml:7: todos\[0\]\.id: a todo id is todo_/);
  });

  it("refuses a fifth class", () => {
    expect(refused(`${BASE}  - { id: todo_abc, class: running, content: x }\n`)).toMatch(
      /goal\.yaml:7: todos\[0\]\.class/,
    );
  });

  it("refuses an advancement todo without a task file", () => {
    expect(refused(`${BASE}  - { id: todo_abc, class: advancement_task, content: x }\n`)).toMatch(
      /todos\[0\]\.task: an advancement_task needs a task file/,
    );
  });

  it("refuses a task file on a todo that is not an advancement", () => {
    expect(refused(`${BASE}  - { id: todo_abc, class: blocker, content: x, task: t.yaml }\n`)).toMatch(
      /todos\[0\]\.task: only an advancement_task has a task file/,
    );
  });

  it("refuses a user gate without its decision scope", () => {
    expect(refused(`${BASE}${advancement}  - { id: todo_gate, class: user_gate, content: x }\n`)).toMatch(
      /goal\.yaml:8: todos\[1\]\.decision_scope: a user_gate needs the decision_scope/,
    );
  });

  it("refuses a required scope no gate covers", () => {
    const m = refused(
      `${BASE}  - { id: todo_fix, class: advancement_task, content: x, task: t.yaml, required_decision_scopes: [publish] }\n`,
    );
    expect(m).toMatch(/todos\[0\]\.required_decision_scopes\[0\]: no user_gate covers the scope publish/);
  });

  it("refuses a monitor without a poll, and a poll without a bounded stop", () => {
    expect(refused(`${BASE}  - { id: todo_mon, class: continuous_monitor, content: x }\n`)).toMatch(
      /todos\[0\]\.poll: a continuous_monitor needs a poll/,
    );
    expect(
      refused(
        `${BASE}  - { id: todo_mon, class: continuous_monitor, content: x, poll: { run: [sh, p.sh], every: 1h } }\n`,
      ),
    ).toMatch(/todos\[0\]\.poll: a monitor needs a bounded stop/);
  });

  it("refuses dependencies on unknown todos, on itself, and cycles", () => {
    expect(
      refused(
        `${BASE}  - { id: todo_fix, class: advancement_task, content: x, task: t.yaml, depends_on: [todo_nope] }\n`,
      ),
    ).toMatch(/todos\[0\]\.depends_on\[0\]: no todo todo_nope in this goal/);
    expect(
      refused(
        `${BASE}  - { id: todo_fix, class: advancement_task, content: x, task: t.yaml, depends_on: [todo_fix] }\n`,
      ),
    ).toMatch(/a todo cannot depend on itself/);
    const m = refused(
      `${BASE}  - { id: todo_aaa, class: blocker, content: x, depends_on: [todo_bbb] }\n  - { id: todo_bbb, class: blocker, content: y, depends_on: [todo_aaa] }\n`,
    );
    expect(m).toMatch(/depends_on forms a cycle: todo_aaa → todo_bbb → todo_aaa/);
  });

  it("refuses duplicate todo ids, no acceptance, no todos and unknown keys", () => {
    expect(refused(BASE + advancement + advancement)).toMatch(/todos\[1\]\.id: duplicate todo id todo_fix/);
    expect(refused(BASE.replace("  - { task: t.yaml }\n", "  []\n") + advancement)).toMatch(
      /acceptance: a goal needs acceptance evidence/,
    );
    expect(refused(`${BASE}  []\n`)).toMatch(/todos: a goal needs at least one todo/);
    expect(refused(`${BASE}${advancement}status: done\n`)).toMatch(/goal\.yaml:\d+: \(root\): .*status/);
  });

  it("refuses a status field on a todo: status is written only through commands", () => {
    expect(
      refused(
        `${BASE}  - { id: todo_fix, class: advancement_task, content: x, task: t.yaml, status: done }\n`,
      ),
    ).toMatch(/todos\[0\].*status/);
  });

  it("refuses a resume_when in the file: a todo starts open, deferring is a command", () => {
    expect(
      refused(
        `${BASE}  - { id: todo_fix, class: advancement_task, content: x, task: t.yaml, resume_when: { at: "2030-01-01T00:00:00Z" } }\n`,
      ),
    ).toMatch(/todos\[0\].*resume_when/);
  });

  it("accepts a goal-wide gate without a scope, and refuses global_gate on anything else", () => {
    const ok = parseGoalFile(
      `${BASE}${advancement}  - { id: todo_all, class: user_gate, content: x, global_gate: true }\n`,
      "goal.yaml",
    );
    expect(ok.todos[1]?.global_gate).toBe(true);
    expect(refused(`${BASE}  - { id: todo_abc, class: blocker, content: x, global_gate: true }\n`)).toMatch(
      /todos\[0\]\.global_gate: only a user_gate can be goal-wide/,
    );
  });

  it("names the line of a YAML syntax error", () => {
    expect(refused("id: g1\nobjective: [unclosed\n")).toMatch(/goal\.yaml:\d+: not valid YAML/);
  });

  it("refuses a file that is not a mapping", () => {
    expect(refused("- a\n- b\n")).toMatch(/goal\.yaml: a goal file is a mapping/);
  });

  it("accepts planner: { model: SPEC } and refuses a spec that is no model, or a key it does not know", () => {
    const g = parseGoalFile(`planner: { model: scripted:planner.json }\n${BASE}${advancement}`, "goal.yaml");
    expect(g.planner).toEqual({ model: "scripted:planner.json" });
    expect(refused(`planner: { model: gpt-4 }\n${BASE}${advancement}`)).toMatch(
      /goal\.yaml:1: planner\.model: a model spec: anthropic:MODEL/,
    );
    expect(refused(`planner: { model: "scripted:" }\n${BASE}${advancement}`)).toMatch(/planner\.model/);
    expect(refused(`planner: { model: scripted:p.json, tools: [] }\n${BASE}${advancement}`)).toMatch(
      /goal\.yaml:1: planner/,
    );
  });
});

describe("goal file: vision, acceptance ids, unblocks_todo_id", () => {
  const todos =
    "todos:\n  - { id: todo_aaa, class: advancement_task, content: a, task: t.yaml }\n  - { id: todo_blk, class: blocker, content: b, unblocks_todo_id: todo_aaa }\n";
  const head = "id: g\nobjective: o\nworkspace: ./repo\n";
  it("accepts a first route, acceptance ids and a blocker's target", () => {
    const g = parseGoalFile(
      `${head}vision: fix a, then prove it\nacceptance: [{ task: t.yaml, id: main }]\n${todos}`,
      "goal.yaml",
    );
    expect(g.vision).toBe("fix a, then prove it");
    expect(g.acceptance[0]?.id).toBe("main");
    expect(g.todos[1]?.unblocks_todo_id).toBe("todo_aaa");
  });
  it("refuses a target that is no todo (or itself), and an acceptance item twice, naming the field", () => {
    const bad = (text: string) => () => parseGoalFile(text, "goal.yaml");
    expect(
      bad(
        `${head}acceptance: [{ task: t.yaml }]\n${todos.replace("unblocks_todo_id: todo_aaa", "unblocks_todo_id: todo_zzz")}`,
      ),
    ).toThrow(/todos\[1\]\.unblocks_todo_id: no todo todo_zzz/);
    expect(
      bad(
        `${head}acceptance: [{ task: t.yaml }]\n${todos.replace("unblocks_todo_id: todo_aaa", "unblocks_todo_id: todo_blk")}`,
      ),
    ).toThrow(/cannot unblock itself/);
    expect(bad(`${head}acceptance: [{ task: t.yaml, id: x }, { task: u.yaml, id: x }]\n${todos}`)).toThrow(
      /acceptance\[1\]: duplicate acceptance item x/,
    );
  });
});
