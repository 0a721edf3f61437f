import { describe, expect, it } from "vitest";
import { applyTodoWrite, renderPlan, type TodoInput } from "../../../src/agent/todo/plan.js";
import { createTodoTool } from "../../../src/agent/todo/todo-tool.js";
import { executeToolCall } from "../../../src/agent/tools/tool-registry.js";

const step = (status: TodoInput["status"], extra: Partial<TodoInput> = {}): TodoInput => ({
  content: "add tests",
  status,
  ...extra,
});
const run = (...writes: TodoInput[][]) => {
  let items = applyTodoWrite([], []).items;
  let last = applyTodoWrite([], []);
  for (const w of writes) {
    last = applyTodoWrite(items, w);
    items = last.items;
  }
  return last;
};

describe("the todo plan: checks freeze when a step completes", () => {
  it("echoes items with their predictions", () => {
    const w = run([step("in_progress", { expect: "tests pass", check: "npm test", expect_calls: 3 })]);
    expect(w.items[0]).toEqual({
      content: "add tests",
      status: "in_progress",
      expect: "tests pass",
      check: "npm test",
      expect_calls: 3,
      check_frozen: false,
    });
    expect(renderPlan(w, true)).toContain(
      "[~] add tests\n    expect: tests pass\n    check: npm test\n    expect_calls: 3",
    );
  });
  it("takes a changed check while the step is open", () => {
    const w = run([step("in_progress", { check: "a" })], [step("in_progress", { check: "b" })]);
    expect(w.items[0]?.check).toBe("b");
    expect(w.changes).toEqual([]);
  });
  it("reports a different check on the completing write as a change, and keeps the declared one", () => {
    const w = run([step("in_progress", { check: "npm test" })], [step("completed", { check: "true" })]);
    expect(w.items[0]).toMatchObject({ check: "npm test", check_frozen: true });
    expect(w.changes).toEqual([
      { step: "add tests", kind: "check_kept", proposed: "true", kept: "npm test" },
    ]);
    expect(w.completed).toEqual(["add tests"]);
  });
  it("restores and freezes a check that the completion omits", () => {
    const w = run(
      [step("in_progress", { check: "npm test" })],
      [{ content: "add tests", status: "completed" }],
    );
    expect(w.items[0]).toMatchObject({ check: "npm test", check_frozen: true });
    expect(w.changes[0]?.kind).toBe("check_restored");
  });
  it("keeps a check withdrawn while the step is open withdrawn", () => {
    const w = run(
      [step("in_progress", { check: "npm test" })],
      [step("in_progress", { check: null })],
      [step("completed")],
    );
    expect(w.items[0]).toMatchObject({ check: null, check_frozen: false });
    expect(w.changes).toEqual([]);
  });
  it("reports a change to a frozen check on a later write, and a withdrawal, without taking either", () => {
    const w1 = run(
      [step("in_progress", { check: "npm test" })],
      [step("completed")],
      [step("completed", { check: "x" })],
    );
    expect(w1.items[0]?.check).toBe("npm test");
    expect(w1.changes[0]).toMatchObject({ kind: "check_kept", proposed: "x" });
    const w2 = run([step("completed", { check: "npm test" })], [step("in_progress", { check: null })]);
    expect(w2.items[0]).toMatchObject({ check: "npm test", status: "in_progress", check_frozen: true });
    expect(w2.reopened).toEqual(["add tests"]);
    expect(renderPlan(w2, true)).toContain("withdrawing it was not taken");
  });
  it("follows a reworded step at the same position", () => {
    const w = run(
      [step("in_progress", { check: "npm test" })],
      [{ content: "add unit tests", status: "completed" }],
    );
    expect(w.items[0]).toMatchObject({ content: "add unit tests", check: "npm test", check_frozen: true });
  });
});

describe("the todo tool", () => {
  const ctx = { workspace: "/nonexistent", sandbox: "none" as const, network: false, timeoutMs: 1000 };
  it("refuses two steps with the same words, centrally, without running", async () => {
    const r = await executeToolCall(
      [createTodoTool({ attempt: 1, events: () => [], checks: true })],
      {
        id: "c1",
        name: "todo",
        args: {
          items: [
            { content: "a", status: "pending" },
            { content: "a", status: "pending" },
          ],
        },
      },
      ctx,
    );
    expect(r).toMatchObject({ valid: false, isError: true, events: [] });
    expect(r.content).toContain("must be unique");
  });
  it("echoes the plan, reading the previous one from the run's events, and returns the write as its fact", async () => {
    const tool = createTodoTool({
      attempt: 2,
      checks: true,
      events: () => [
        {
          id: "1",
          type: "todo_written",
          data: {
            attempt: 1,
            call_id: "c0",
            items: [{ content: "a", status: "in_progress", check: "npm test", check_frozen: false }],
            changes: [],
            completed: [],
            reopened: [],
          },
          meta: { at: "2026-01-01T00:00:00Z", origin: "runtime" },
        },
      ],
    });
    const r = await executeToolCall(
      [tool],
      { id: "c1", name: "todo", args: { items: [{ content: "a", status: "completed" }] } },
      ctx,
    );
    expect(r.events).toEqual([
      {
        type: "todo_written",
        data: {
          attempt: 2,
          call_id: "c1",
          items: [{ content: "a", status: "completed", check: "npm test", check_frozen: true }],
          // Completing without restating the check keeps it (the check freezes on completion).
          changes: [{ step: "a", kind: "check_restored", proposed: null, kept: "npm test" }],
          completed: ["a"],
          reopened: [],
        },
      },
    ]);
    expect(r).toMatchObject({ valid: true, isError: false });
    expect(r.content).toContain("[x] a\n    check: npm test (frozen)");
    expect(r.content).toContain("runs after this batch");
  });
});
