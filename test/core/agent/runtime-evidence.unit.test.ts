// The pure parts behind Claude Code's TaskCompleted and Stop in `loopgate claude`: the core goal gate
// over runtime facts, task declarations, spans and appraisals, and how hook input becomes a task fact.
import { describe, expect, it } from "vitest";
import { asRuntimeEvents, goalAtStop, taskCompleted } from "../../../src/builders/claude/claude-gates.js";
import { parseHookInput, taskOf, toolFact } from "../../../src/builders/stop-gate/hook-input.js";
import {
  appraiseRuntimeTask,
  frozenCheck,
  parseTaskDeclaration,
  runtimeSpan,
} from "../../../src/core/agent/runtime-steps.js";
import { evaluateGoal, predicateHolds } from "../../../src/core/agent/stop-condition.js";
import type { EventData } from "../../../src/core/events/loopgate-event.js";

type Fact = EventData<"agent_tool_observed">;
const fact = (o: Partial<Fact> & { tool: string }): Fact => ({
  attempt: 1,
  agent: "claude-code",
  hook_event: "PostToolUse",
  session_id: "s1",
  command: "",
  exit_code: 0,
  excerpt: "",
  ...o,
});
const bash = (command: string, exit = 0) =>
  fact({
    tool: "Bash",
    command,
    exit_code: exit,
    hook_event: exit === 0 ? "PostToolUse" : "PostToolUseFailure",
  });
const TESTS = { command_succeeded: "node --test test/" };

describe("goal gate over runtime facts (core evaluateGoal with runtimeCommands)", () => {
  it("a reported Bash success of exactly the command holds only when runtime evidence is allowed", () => {
    const w = asRuntimeEvents([bash("node --test test/")]);
    expect(predicateHolds(TESTS, w, 1)).toBe(false); // origin agent_runtime is not trusted by default
    expect(predicateHolds(TESTS, w, 1, { runtimeCommands: true })).toBe(true);
  });

  it("a failed run, another command, or a later write or other shell command does not hold", () => {
    const r = { runtimeCommands: true };
    expect(predicateHolds(TESTS, asRuntimeEvents([bash("node --test test/", 1)]), 1, r)).toBe(false);
    expect(predicateHolds(TESTS, asRuntimeEvents([bash("node --test test/ || true")]), 1, r)).toBe(false);
    const edited = [bash("node --test test/"), fact({ tool: "Edit", command: "add.js" })];
    expect(predicateHolds(TESTS, asRuntimeEvents(edited), 1, r)).toBe(false);
    const shell = [bash("node --test test/"), bash("echo x > add.js")];
    expect(predicateHolds(TESTS, asRuntimeEvents(shell), 1, r)).toBe(false);
    const read = [bash("node --test test/"), fact({ tool: "Read", command: "add.js" })];
    expect(predicateHolds(TESTS, asRuntimeEvents(read), 1, r)).toBe(true);
    const rerun = [bash("echo x > add.js"), bash("node --test test/")];
    expect(evaluateGoal([TESTS], asRuntimeEvents(rerun), 1, 2, r).outcome).toBe("completed");
  });

  it("goalAtStop blocks with the unmet predicate while a block is left, then lets the gates decide", () => {
    const base = { predicates: [TESTS], workspace: "/nonexistent", attempt: 1, sessionId: "s1", stop: 1 };
    const unmet = goalAtStop({ ...base, facts: [bash("node --test")], blocksLeft: 2 });
    expect(unmet.reply?.exit_code).toBe(2);
    expect(unmet.reply?.stderr).toContain("- command_succeeded: node --test test/");
    expect(unmet.fact).toMatchObject({
      outcome: "continuing",
      unmet: ["command_succeeded: node --test test/"],
    });
    const spent = goalAtStop({ ...base, facts: [], blocksLeft: 0 });
    expect(spent.reply).toBeNull();
    expect(spent.fact.outcome).toBe("blocked");
    const met = goalAtStop({ ...base, facts: [bash("node --test test/")], blocksLeft: 2 });
    expect(met.reply).toBeNull();
    expect(met.fact.outcome).toBe("completed");
  });

  it("file_exists is probed in the workspace; a path leaving it never holds", () => {
    const base = { facts: [], workspace: "/etc", attempt: 1, sessionId: "s1", stop: 1, blocksLeft: 1 };
    expect(goalAtStop({ ...base, predicates: [{ file_exists: "hostname" }] }).fact.outcome).toBe("completed");
    expect(goalAtStop({ ...base, predicates: [{ file_exists: "../etc/hostname" }] }).fact.outcome).toBe(
      "continuing",
    );
  });
});

describe("Claude tasks as plan steps", () => {
  it("declaration lines: check (backticks stripped), expect, expect_calls; absent lines are null", () => {
    expect(
      parseTaskDeclaration("Fix add.js\ncheck: `node --test test/`\nexpect: sums\nexpect_calls: 2"),
    ).toEqual({
      check: "node --test test/",
      expect: "sums",
      expectCalls: 2,
    });
    expect(parseTaskDeclaration("no lines here; check:nothing")).toEqual({
      check: null,
      expect: null,
      expectCalls: null,
    });
  });

  it("the check is frozen at its first declaration: a later description without it or with another does not change it", () => {
    const facts = [
      fact({ tool: "TaskCreate", task: { id: "1", description: "check: node --test test/" } }),
      fact({ tool: "TaskUpdate", task: { id: "1", description: "check: true" } }),
    ];
    expect(frozenCheck(facts, "1", "no check now")).toBe("node --test test/");
    expect(frozenCheck([], "2", "check: make test")).toBe("make test");
    expect(frozenCheck([], "2", "nothing")).toBeNull();
  });

  it("the span is the work calls after the task last went in progress; task tools are bookkeeping", () => {
    const facts = [
      bash("ls"),
      fact({ tool: "TaskUpdate", task: { id: "1", status: "in_progress" } }),
      bash("false", 1),
      fact({ tool: "TaskUpdate", task: { id: "2", status: "in_progress" } }),
      bash("true"),
    ];
    expect(runtimeSpan(facts, "1")).toEqual(["failed", "succeeded"]);
    expect(runtimeSpan(facts, "3")).toBeNull();
  });

  it("a failed check refuses the completion with the finding until the cap; a passing one lets it through", () => {
    const facts = [fact({ tool: "TaskUpdate", task: { id: "1", status: "in_progress" } }), bash("edit")];
    const failed = {
      command: "node --test test/",
      status: "failed" as const,
      exit_code: 1,
      detail: "not ok 1",
    };
    const a = { facts, taskId: "1", step: "Fix add.js", check: failed, maxBlocks: 2 };
    const first = appraiseRuntimeTask({ ...a, priorBlocks: 0 });
    expect(first).toMatchObject({ finding: "check_failed", blocked: true, calls: 1 });
    expect(first.rendered).toContain('"node --test test/"');
    expect(first.rendered).toContain("not ok 1");
    expect(appraiseRuntimeTask({ ...a, priorBlocks: 2 }).blocked).toBe(false);
    const passed = appraiseRuntimeTask({
      ...a,
      priorBlocks: 0,
      check: { ...failed, status: "passed", exit_code: 0 },
    });
    expect(passed).toMatchObject({ finding: "landed", blocked: false });
    expect(
      appraiseRuntimeTask({ ...a, facts: [facts[0] as Fact], check: null, priorBlocks: 0 }),
    ).toMatchObject({
      finding: "null_step",
      blocked: false,
    });
  });

  it("taskCompleted runs the frozen check only when one is declared, and answers exit 2 on failure", async () => {
    const ran: string[] = [];
    const run = async (command: string) => {
      ran.push(command);
      return { command, status: "failed" as const, exit_code: 1, detail: "boom" };
    };
    const base = { facts: [], attempt: 1, sessionId: "s1", priorBlocks: 0, run };
    const none = await taskCompleted({ ...base, task: { id: "1", subject: "a", description: "no check" } });
    expect(ran).toEqual([]);
    expect(none.reply.exit_code).toBe(0);
    expect(none.fact.check).toBeNull();
    const bad = await taskCompleted({
      ...base,
      task: { id: "1", subject: "a", description: "check: make t" },
    });
    expect(ran).toEqual(["make t"]);
    expect(bad.reply.exit_code).toBe(2);
    expect(bad.fact).toMatchObject({ blocked: true, finding: "check_failed", task_id: "1" });
  });
});

describe("task facts from Claude Code's TaskCreate and TaskUpdate reports", () => {
  const post = (o: Record<string, unknown>) => {
    const r = parseHookInput(JSON.stringify({ session_id: "s1", hook_event_name: "PostToolUse", ...o }));
    if ("error" in r || r.input.hook_event_name !== "PostToolUse") throw new Error("bad input");
    return r.input;
  };
  it("TaskCreate gives id, subject and description; TaskUpdate the new status; a refused update none", () => {
    const created = post({
      tool_name: "TaskCreate",
      tool_use_id: "toolu_1",
      tool_input: { subject: "Fix", description: "check: true" },
      tool_response: { task: { id: "1", subject: "Fix", description: "check: true" } },
    });
    expect(taskOf(created)).toEqual({
      id: "1",
      subject: "Fix",
      description: "check: true",
      status: "pending",
    });
    expect(toolFact(created, 1)).toMatchObject({ call_id: "toolu_1", task: { id: "1" } });
    const moved = post({
      tool_name: "TaskUpdate",
      tool_input: { taskId: "1", status: "in_progress" },
      tool_response: { success: true, taskId: "1", statusChange: { from: "pending", to: "in_progress" } },
    });
    expect(taskOf(moved)).toEqual({ id: "1", status: "in_progress" });
    const refused = post({
      tool_name: "TaskUpdate",
      tool_input: { taskId: "1", status: "completed" },
      tool_response: { success: false, taskId: "1", error: "TaskCompleted hook feedback" },
    });
    expect(taskOf(refused)).toBeNull();
    expect(taskOf(post({ tool_name: "Bash", tool_input: { command: "ls" } }))).toBeNull();
  });
});
