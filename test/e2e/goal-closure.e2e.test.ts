// Terminal closure is a strict conjunction: every todo closed, acceptance proved fresh on the current
// revision, the agent's route on record (a vision checkpoint read against the current acceptance), and a
// recorded no_followup intent. Each missing piece keeps the goal open.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loopgate, parseStdout, removeTemps, show, tempDir } from "./cli.js";

afterAll(removeTemps);

/** A goal with one advancement todo whose task's gate the starting workspace already passes. */
function smallGoal(): string {
  const dir = tempDir("loopgate-goal-small-");
  mkdirSync(join(dir, "repo"));
  writeFileSync(join(dir, "repo", "greeting.txt"), "hello, world\n");
  writeFileSync(
    join(dir, "task.yaml"),
    "id: greet\nprompt: say hello to the world\nworkspace: ./repo\ngates:\n  - id: says-world\n    static: { path: greeting.txt, match: world }\n",
  );
  writeFileSync(
    join(dir, "goal.yaml"),
    "id: greet-goal\nobjective: greet the world\nworkspace: ./repo\nbuilder: noop\nacceptance: [{ task: task.yaml }]\ntodos:\n  - { id: todo_greet, class: advancement_task, content: greet, task: task.yaml }\n",
  );
  return join(dir, "goal.yaml");
}

interface View {
  closed: boolean;
  frontierGaps: string[];
  runtimeState: string;
}

describe("terminal closure", () => {
  it("holds only after the todo is done on evidence, acceptance is proved and no_followup is recorded", async () => {
    const store = tempDir();
    const lg = (...a: string[]) => loopgate([...a, "--store", store]);
    const view = async () => parseStdout<View>(await lg("goal", "status", "greet-goal", "--json"));
    expect((await lg("goal", "new", smallGoal())).code).toBe(0);
    const close0 = await lg("goal", "close", "greet-goal");
    expect(close0.code, show(close0)).toBe(2);
    expect(close0.stderr).toMatch(/needs --rationale TEXT/);
    // An empty-looking queue is not closure: nothing has been proved yet.
    let v = await view();
    expect(v.closed).toBe(false);
    expect(v.frontierGaps.some((g) => g.includes("todo_greet"))).toBe(true);

    const run = await lg("todo", "run", "greet-goal", "todo_greet", "--json");
    expect(run.code, show(run)).toBe(0);
    const runId = parseStdout<{ run_id: string }>(run).run_id;
    expect((await lg("todo", "done", "greet-goal", "todo_greet", "--evidence", runId)).code).toBe(0);
    v = await view();
    expect(v.closed).toBe(false);
    expect(v.frontierGaps.join("\n")).toMatch(/acceptance/);

    const acc = await lg("goal", "accept", "greet-goal", "--json");
    expect(acc.code, show(acc)).toBe(0);
    expect(parseStdout<{ accepted: boolean }>(acc).accepted).toBe(true);
    v = await view();
    expect(v.closed).toBe(false);
    expect(v.frontierGaps.join("\n")).toMatch(/no_followup/);

    const close = await lg("goal", "close", "greet-goal", "--rationale", "the world is greeted");
    expect(close.code, show(close)).toBe(0);
    // No route on record: a missing vision checkpoint keeps it open, and is the replan obligation owed.
    v = await view();
    expect(v.closed).toBe(false);
    expect(v.frontierGaps).toEqual([
      expect.stringMatching(/^vision noop: agent noop has no vision checkpoint/),
    ]);
    expect(v.runtimeState).toBe("focus_wait");
    const record = await lg("goal", "vision", "record", "greet-goal", "--route", "greet, then prove it");
    expect(record.code, show(record)).toBe(0);
    v = await view();
    expect(v.frontierGaps).toEqual([]);
    expect(v.closed).toBe(true);
    const text = await lg("goal", "status", "greet-goal");
    expect(text.stdout).toMatch(/closure: terminal/);
    // A stopped goal is never reported closed.
    expect((await lg("goal", "stop", "greet-goal")).code).toBe(0);
    v = await view();
    expect(v.closed).toBe(false);
    expect(v.runtimeState).toBe("paused");
  });
});
