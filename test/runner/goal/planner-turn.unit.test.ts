import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { scriptedModel } from "../../../src/agent/models/scripted-model.js";
import type { GoalEventBody } from "../../../src/core/events/goal/goal-events.js";
import { goalDecider } from "../../../src/core/goal/goal-decider.js";
import { foldGoal } from "../../../src/core/goal/goal-state.js";
import type { GoalState } from "../../../src/core/goal/goal-state-shape.js";
import type { Obligation } from "../../../src/core/goal/obligations.js";
import { assess } from "../../../src/core/goal/runtime-state.js";
import { plannerModel, planReplan, replanObligation } from "../../../src/runner/goal/planner-turn.js";
import { loadTask } from "../../../src/runner/task-source/load-task.js";
import { accepted, adv, completed, created, REV0, spec } from "../../core/goal/goal-fixtures.js";

// The planner turn with scripted models: the model proposes, loopgate admits.

const ROOT = resolve("examples/goal-csvcol");
const A = "agent_main";
const owing: GoalEventBody[] = [
  ...created(spec([adv("todo_a")])),
  completed("todo_a"),
  {
    type: "vision_recorded",
    data: { agent_id: A, route: "route A", checkpoint: { goal_revision: REV0, acceptance_version: 0 } },
  },
  accepted(REV0, { status: "ESCALATED" }),
];
const state: GoalState = foldGoal(owing);
const obligation = assess(state, { now: new Date("2026-12-01T12:00:00.000Z"), health: [] })
  .obligations[0] as Obligation;
const call = (name: string, args: unknown) => ({
  tool_calls: [{ name, args }],
  usage: { input_tokens: 100, output_tokens: 20 },
});
const obligationsAfter = (events: GoalEventBody[]) =>
  assess(foldGoal([...owing, ...events]), {
    now: new Date("2026-12-01T12:00:00.000Z"),
    health: [],
  }).obligations.map((o) => o.kind);

describe("planReplan (scripted model)", () => {
  it("the bound obligation is a replan", () => {
    expect(obligation.kind).toBe("replan_acceptance_failed");
  });
  it("a delta is admitted: the todos (task file resolved) and the vision patch, as one answer_replan", async () => {
    const model = scriptedModel([
      call("propose_todos", {
        todos: [
          {
            id: "todo_crlf",
            content: "accept CRLF input",
            class: "advancement_task",
            task: "tasks/crlf/task.yaml",
          },
        ],
      }),
      call("patch_vision", {
        kind: "patch",
        route: "route B: fix CRLF first",
        patch: "CRLF before quoting",
        reason: "acceptance failed on CRLF",
      }),
      { text: "planned", usage: { input_tokens: 50, output_tokens: 5 } },
    ]);
    const r = await planReplan({ state, obligation, model, taskRoot: ROOT, operationId: "t7/writeback" });
    expect(r.outcome).toBe("delta");
    expect(r.refusals).toEqual([]);
    expect(r.commands).toHaveLength(1);
    expect(r.events.map((e) => e.type)).toEqual(["vision_patched", "todo_added", "replan_answered"]);
    expect(r.events[2]?.data).toMatchObject({ operation_id: "t7/writeback", outcome: "delta" });
    const digest = loadTask(resolve(ROOT, "tasks/crlf/task.yaml")).digest;
    expect(r.events[1]?.data).toMatchObject({
      todo: { id: "todo_crlf", task: { task_id: "csvcol-crlf", digest } },
    });
    // The commands decide to the same events on the state the turn read (what the caller appends).
    expect(goalDecider.decide(r.commands?.[0] as never, state)).toEqual(r.events);
    expect(obligationsAfter(r.events)).toEqual([]);
    expect(r.usage).toEqual({ tokens: 100 + 20 + 100 + 20 + 55, cost_usd: 0, turns: 1, requests: 3 });
  });
  it("a refused proposal is returned to the model as the tool result, and it can correct it", async () => {
    const model = scriptedModel([
      call("propose_todos", { todos: [{ id: "fix", content: "a fix", class: "user_action" }] }),
      call("propose_todos", {
        todos: [{ id: "todo_ask_maintainer", content: "ask which CRLF form", class: "user_action" }],
      }),
      call("patch_vision", { kind: "unchanged", reason: "the route holds; one question first" }),
      { text: "done" },
    ]);
    const r = await planReplan({ state, obligation, model, taskRoot: ROOT });
    expect(r.refusals).toHaveLength(1);
    expect(r.refusals[0]?.message).toMatch(/not a todo id/);
    const toolResult = model.requests[1]?.messages.at(-1);
    expect(toolResult).toMatchObject({ role: "tool", name: "propose_todos", isError: true });
    expect(toolResult?.role === "tool" && toolResult.content).toMatch(/^refused: .*not a todo id/);
    expect(r.outcome).toBe("delta");
    expect(r.events.map((e) => e.type)).toEqual(["vision_unchanged_recorded", "todo_added"]);
  });
  it("a no-delta answer is replan_noop: recorded, the obligation stays", async () => {
    const model = scriptedModel([{ text: "I have replanned the goal." }]);
    const r = await planReplan({ state, obligation, model, taskRoot: ROOT });
    expect(r.outcome).toBe("replan_noop");
    expect(r.events).toEqual([
      {
        type: "replan_noop_recorded",
        data: {
          agent_id: A,
          obligation: "replan_acceptance_failed:acc_all",
          reason: "I have replanned the goal.",
        },
      },
    ]);
    expect(obligationsAfter(r.events)).toEqual(["replan_acceptance_failed"]);
  });
  it("a bare patch is refused as a whole and returned to the model; with no fix it ends replan_noop", async () => {
    const model = scriptedModel([
      call("patch_vision", { kind: "patch", route: "route B", patch: "p", reason: "r" }),
      { text: "done" },
      { text: "done, really" },
    ]);
    const r = await planReplan({ state, obligation, model, taskRoot: ROOT, maxRequests: 3 });
    expect(r.refusals.map((x) => x.tool)).toEqual(["answer", "answer"]);
    expect(r.refusals[0]?.message).toMatch(/patch_without_delta/);
    const told = model.requests[2]?.messages.at(-1);
    expect(told).toMatchObject({ role: "user", origin: "runtime" });
    expect(r.outcome).toBe("replan_noop");
    expect(r.events.map((e) => e.type)).toEqual(["replan_noop_recorded"]);
  });
  it("a model failure admits nothing (commands null) and says why", async () => {
    const model = scriptedModel([]);
    const r = await planReplan({ state, obligation, model, taskRoot: ROOT });
    expect(r.commands).toBeNull();
    expect(r.failure?.kind).toBe("script_exhausted");
  });
  it("must reject: no_followup together with proposed todos (the later call is refused)", async () => {
    const model = scriptedModel([
      call("propose_todos", { todos: [{ id: "todo_more", content: "more", class: "user_action" }] }),
      call("declare_no_followup", { rationale: "nothing left" }),
      call("patch_vision", { kind: "unchanged", reason: "holds" }),
      { text: "" },
    ]);
    const r = await planReplan({ state, obligation, model, taskRoot: ROOT });
    expect(r.refusals[0]?.message).toMatch(/no_followup_with_new_work/);
    expect(r.answer.no_followup).toBeUndefined();
    expect(r.outcome).toBe("delta");
  });
});

describe("planner turn helpers", () => {
  it("replanObligation finds the bound obligation by id, and null once it is answered", () => {
    expect(replanObligation(state, "replan_acceptance_failed:acc_all")).toEqual(obligation);
    expect(replanObligation(state, "replan_acceptance_failed:nope")).toBeNull();
    const answered = foldGoal([
      ...owing,
      { type: "todo_added", data: { todo: adv("todo_more"), successor_of: null } },
    ]);
    expect(replanObligation(answered, "replan_acceptance_failed:acc_all")).toBeNull();
  });
  it("plannerModel is the goal agent's model; a missing script file is bad input naming it", () => {
    expect(() => plannerModel(state)).toThrow(/model\.yaml/);
    const noModel = foldGoal(created(spec([], { agent: { agent_id: A, kind: "builder", command: "x" } })));
    expect(() => plannerModel(noModel)).toThrow(/names no model/);
  });
});

describe("planReplan: the acceptance delta", () => {
  it("change_acceptance with a vision statement: one answer whose acceptance change comes first, the route read against it", async () => {
    const model = scriptedModel([
      call("change_acceptance", {
        add: [{ task: "tasks/crlf/task.yaml", gates: ["heldout-crlf"], id: "crlf" }],
        retire: ["acc_all"],
        reason: "acceptance is the CRLF proof now",
      }),
      call("patch_vision", { kind: "unchanged", reason: "the route holds against the new acceptance" }),
      { text: "done", usage: { input_tokens: 5, output_tokens: 1 } },
    ]);
    const r = await planReplan({ state, obligation, model, taskRoot: ROOT });
    expect(r.refusals).toEqual([]);
    expect(r.events.map((e) => e.type)).toEqual(["goal_acceptance_changed", "vision_unchanged_recorded"]);
    expect(r.events[0]?.data).toMatchObject({
      acceptance: [
        { id: "crlf", kind: "task", ref: `${resolve(ROOT, "tasks/crlf/task.yaml")}#heldout-crlf` },
      ],
      delta: [
        { change: "retired", item_id: "acc_all" },
        { change: "added", item_id: "crlf" },
      ],
    });
    const after = foldGoal([...owing, ...r.events]);
    expect(after.acceptanceVersion).toBe(1);
    expect(after.visions[A]?.checkpoint.acceptance_version).toBe(1);
  });
  it("refuses an unknown item, a gate the task lacks, and an empty list; alone (no vision statement) it is no answer", async () => {
    const model = scriptedModel([
      call("change_acceptance", { retire: ["acc_nope"], reason: "r" }),
      call("change_acceptance", {
        add: [{ task: "tasks/crlf/task.yaml", gates: ["no-such-gate"] }],
        reason: "r",
      }),
      call("change_acceptance", { retire: ["acc_all"], reason: "r" }),
      call("change_acceptance", { add: [{ task: "tasks/crlf/task.yaml" }], reason: "r" }),
      { text: "that is all", usage: { input_tokens: 5, output_tokens: 1 } },
      { text: "still all", usage: { input_tokens: 5, output_tokens: 1 } },
    ]);
    const r = await planReplan({ state, obligation, model, taskRoot: ROOT, maxRequests: 6 });
    expect(r.refusals.map((x) => x.message)).toEqual([
      expect.stringMatching(/acc_nope is not an acceptance item/),
      expect.stringMatching(/has no gate no-such-gate/),
      expect.stringMatching(/acceptance_not_empty/),
      expect.stringMatching(/vision_statement_missing/),
      expect.stringMatching(/vision_statement_missing/),
    ]);
    // Out of requests with no admissible answer: replan_noop, and acceptance is unchanged.
    expect(r.outcome).toBe("replan_noop");
    expect(r.events.map((e) => e.type)).toEqual(["replan_noop_recorded"]);
  });
});
