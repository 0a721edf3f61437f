import { describe, expect, it } from "vitest";
import type { GoalEventBody, TodoSpec } from "../../../src/core/events/goal/goal-events.js";
import { budgetUsage } from "../../../src/core/goal/budget.js";
import { terminalClosure } from "../../../src/core/goal/closure.js";
import { interactionContract } from "../../../src/core/goal/contract.js";
import { encodeContract } from "../../../src/core/goal/contract-wire.js";
import { foldGoal } from "../../../src/core/goal/goal-state.js";
import { handoffs } from "../../../src/core/goal/handoff.js";
import { projectStatus } from "../../../src/core/goal/projection.js";
import { assess } from "../../../src/core/goal/runtime-state.js";
import { formatResumeCondition, parseResumeCondition } from "../../../src/core/goal/todo-rules.js";
import {
  accepted,
  adv,
  approved,
  completed,
  created,
  gate,
  monitor,
  REV0,
  revision,
  spec,
  visionRecorded,
} from "./goal-fixtures.js";

const NOW = "2026-12-01T12:00:00.000Z";
const ctx = { now: new Date(NOW), health: [] };
const closeNf = (id: string): GoalEventBody => ({
  type: "todo_closed_no_followup",
  data: { todo_id: id, rationale: "r" },
});
const blocker = (id: string, extra: Partial<TodoSpec> = {}): TodoSpec => ({
  id,
  content: "fix CI",
  class: "blocker",
  ...extra,
});

describe("handoff states (derived per relation)", () => {
  const base = (b: TodoSpec) => created(spec([adv("todo_target"), b]));
  const stateOf = (b: TodoSpec, more: GoalEventBody[] = []) =>
    handoffs(foldGoal([...base(b), ...more]))[0]?.state;
  it("blocking while the blocker is open or blocked; deferred while deferred", () => {
    expect(stateOf(blocker("todo_ci", { unblocks_todo_id: "todo_target" }))).toBe("blocking");
    expect(
      stateOf(blocker("todo_ci"), [{ type: "todo_blocked", data: { todo_id: "todo_ci", reason: "x" } }]),
    ).toBe("blocking");
    expect(
      stateOf(blocker("todo_ci"), [
        {
          type: "todo_deferred",
          data: { todo_id: "todo_ci", resume_when: { kind: "at", at: NOW }, note: "" },
        },
      ]),
    ).toBe("deferred");
  });
  it("cleared with a successor, without one, with no_followup, or superseded", () => {
    const withTask = blocker("todo_ci", {
      unblocks_todo_id: "todo_target",
      task: { path: "t.yaml", task_id: "todo_ci", digest: "sha-todo_ci" },
    });
    expect(stateOf(withTask, [completed("todo_ci")])).toBe("cleared_with_successor");
    const bare = blocker("todo_ci", { task: { path: "t.yaml", task_id: "todo_ci", digest: "sha-todo_ci" } });
    expect(stateOf(bare, [completed("todo_ci")])).toBe("cleared_without_successor");
    expect(stateOf(blocker("todo_ci"), [closeNf("todo_ci")])).toBe("cleared_no_followup");
    expect(
      stateOf(blocker("todo_ci"), [
        { type: "todo_added", data: { todo: blocker("todo_ci2"), successor_of: "todo_ci" } },
        {
          type: "todo_superseded",
          data: { todo_id: "todo_ci", successor_id: "todo_ci2", note: "superseded", reason: "" },
        },
      ]),
    ).toBe("superseded");
  });
  it("a blocking handoff holds its target back; cleared_without_successor is a replan obligation (focus_wait)", () => {
    const held = foldGoal(base(blocker("todo_ci", { unblocks_todo_id: "todo_target" })));
    expect(assess(held, ctx).selection).toBeNull();
    expect(assess(held, ctx).waits.map((w) => w.why)).toContain("held back by blocker todo_ci");
    const bare = blocker("todo_ci", { task: { path: "t.yaml", task_id: "todo_ci", digest: "sha-todo_ci" } });
    const cleared = foldGoal([...base(bare), completed("todo_ci")]);
    expect(assess(cleared, ctx).runtimeState).toBe("focus_wait");
    expect(assess(cleared, ctx).obligations.map((o) => o.kind)).toEqual(["handoff_without_successor"]);
  });
});

describe("deferred resume candidates", () => {
  const ev = created(spec([adv("todo_later"), adv("todo_now")]));
  const defer = (at: string): GoalEventBody => ({
    type: "todo_deferred",
    data: { todo_id: "todo_later", resume_when: { kind: "at", at }, note: "" },
  });
  it("a deferred todo whose condition holds is a derived candidate: status stays deferred, a person reopens it", () => {
    const st = foldGoal([...ev, defer("2026-12-01T00:00:00.000Z")]);
    const view = projectStatus(st, ctx);
    expect(view.todos.find((t) => t.id === "todo_later")).toMatchObject({
      status: "deferred",
      resumeCandidate: true,
    });
    const c = encodeContract(interactionContract(st, ctx));
    expect(c.user_channel.actions).toEqual([
      {
        todo_id: "todo_later",
        action: "resume_candidate",
        detail: "its resume_when holds: reopen it explicitly",
      },
    ]);
    expect(c.next_cli_actions.map((a) => a.argv.join(" "))).toContain(
      "loopgate todo reopen goal_csv todo_later",
    );
  });
  it("before its time it waits, and the scheduler hint names the time", () => {
    const st = foldGoal([...ev, defer("2026-12-05T00:00:00.000Z"), completed("todo_now")]);
    const c = encodeContract(interactionContract(st, ctx));
    expect(c.runtime_state).toBe("waiting");
    expect(c.scheduler_hint).toEqual({ action: "wait_condition", not_before: "2026-12-05T00:00:00.000Z" });
  });
  it("--until parses the three machine-readable forms and refuses prose", () => {
    expect(parseResumeCondition("at:2026-12-05T00:00:00Z")).toEqual({
      kind: "at",
      at: "2026-12-05T00:00:00Z",
    });
    expect(parseResumeCondition("2026-12-05T00:00:00Z")).toEqual({ kind: "at", at: "2026-12-05T00:00:00Z" });
    expect(parseResumeCondition("todo:todo_docs=done")).toEqual({
      kind: "todo_status",
      todo_id: "todo_docs",
      status: "done",
    });
    expect(parseResumeCondition("gate:todo_publish=any")).toEqual({
      kind: "gate_decision",
      gate_id: "todo_publish",
      decision: "any",
    });
    expect(() => parseResumeCondition("when the user looks")).toThrow(
      /--until: "when the user looks" is not a machine-readable resume condition/,
    );
    expect(() => parseResumeCondition("todo:todo_docs=running")).toThrow(/not a machine-readable/);
    expect(formatResumeCondition({ kind: "todo_status", todo_id: "todo_docs", status: "done" })).toBe(
      "todo:todo_docs=done",
    );
  });
});

describe("budget and throttling", () => {
  const spend = (n: number, at: string): GoalEventBody => ({
    type: "quota_spent",
    data: { turn_id: `turn_${n}`, at, turns: 1, tokens: 500, cost_usd: 0.5 },
  });
  const goal = spec([adv("todo_one_more")], {
    budget: { window_seconds: 3600, turns_per_window: 2, max_tokens: 10_000 },
  });
  it("turns in the window are counted and the window's reopening is the hint", () => {
    const st = foldGoal([
      ...created(goal),
      spend(1, "2026-12-01T11:10:00.000Z"),
      spend(2, "2026-12-01T11:30:00.000Z"),
    ]);
    const b = budgetUsage(st, new Date(NOW));
    expect(b).toMatchObject({
      turnsInWindow: 2,
      tokens: 1000,
      costUsd: 1,
      exhausted: ["turns_per_window"],
    });
    const c = encodeContract(interactionContract(st, ctx));
    expect(c.runtime_state).toBe("throttled");
    expect(c.scheduler_hint).toEqual({ action: "wait_quota", not_before: "2026-12-01T12:10:00.000Z" });
    expect(terminalClosure(st, ctx).gaps.map((g) => g.kind)).toContain("throttled");
  });
  it("spends older than the window do not count", () => {
    const st = foldGoal([
      ...created(goal),
      spend(1, "2026-12-01T09:00:00.000Z"),
      spend(2, "2026-12-01T11:30:00.000Z"),
    ]);
    expect(budgetUsage(st, new Date(NOW)).exhausted).toEqual([]);
    expect(assess(st, ctx).runtimeState).toBe("eligible");
  });
});

describe("closure: a strict conjunction", () => {
  const goal = spec([adv("todo_one_more"), gate("todo_pub", "publish"), monitor("todo_watch")]);
  const done = [...created(goal), completed("todo_one_more"), approved("todo_pub"), closeNf("todo_watch")];
  const allDone = [...done, visionRecorded()];
  const nf: GoalEventBody = { type: "goal_no_followup_declared", data: { rationale: "shipped" } };
  it("an empty queue is not terminal: a vision checkpoint, acceptance proved and no_followup recorded", () => {
    expect(terminalClosure(foldGoal(done), ctx).gaps.map((g) => g.kind)).toEqual([
      "vision",
      "acceptance",
      "no_followup",
    ]);
    const st = foldGoal(allDone);
    expect(terminalClosure(st, ctx).gaps.map((g) => g.kind)).toEqual(["acceptance", "no_followup"]);
    const c = encodeContract(interactionContract(st, ctx));
    expect(c.agent_channel.selected_action).toEqual({
      kind: "acceptance",
      acceptance_ids: ["acc_all"],
      reason: "no advancement todo is left: prove acceptance fresh on the current revision",
    });
  });
  it("acceptance on an older revision does not count", () => {
    const st = foldGoal([...allDone, accepted(REV0), revision(REV0, "rev1"), nf]);
    expect(terminalClosure(st, ctx).gaps.map((g) => g.kind)).toEqual(["acceptance"]);
  });
  it("all proved on the current revision plus no_followup: terminal, and the hint stops on it", () => {
    const st = foldGoal([...allDone, accepted(REV0), nf]);
    expect(terminalClosure(st, ctx)).toEqual({ terminal: true, gaps: [], outcome: "achieved" });
    expect(encodeContract(interactionContract(st, ctx)).scheduler_hint).toEqual({
      action: "terminal_no_followup",
      not_before: null,
    });
  });
  it("a stopped goal is never closed; a health issue blocks closure", () => {
    const stopped: GoalEventBody = {
      type: "goal_activation_changed",
      data: { activation: "stopped", note: "" },
    };
    expect(
      terminalClosure(foldGoal([...allDone, accepted(REV0), nf, stopped]), ctx).gaps.map((g) => g.kind),
    ).toEqual(["stopped"]);
    const sick = { now: new Date(NOW), health: [{ code: "workspace_dirty", detail: "2 files changed" }] };
    const st = foldGoal([...allDone, accepted(REV0), nf]);
    expect(terminalClosure(st, sick).terminal).toBe(false);
    const c = encodeContract(interactionContract(st, sick));
    expect(c.runtime_state).toBe("blocked_health");
    expect(c.workspace_guard).toMatchObject({ ok: false, goal_revision: REV0 });
  });
  it("a failed acceptance with no advancement left is a replan obligation until a delta answers it", () => {
    const failed = accepted(REV0, { status: "ESCALATED" });
    const st = foldGoal([...allDone, failed]);
    expect(assess(st, ctx).runtimeState).toBe("focus_wait");
    expect(terminalClosure(st, ctx).gaps.map((g) => g.kind)).toContain("replan");
    const answered = foldGoal([
      ...allDone,
      failed,
      { type: "todo_added", data: { todo: adv("todo_fix"), successor_of: null } },
    ]);
    expect(assess(answered, ctx).obligations).toEqual([]);
    expect(assess(answered, ctx).selection).toMatchObject({ kind: "todo", todoId: "todo_fix" });
  });
  it("a vision read against an older acceptance is stale until re-read", () => {
    const cp = { goal_revision: REV0, acceptance_version: 0 };
    const ev: GoalEventBody[] = [
      ...created(goal),
      { type: "vision_recorded", data: { agent_id: "agent_main", route: "r", checkpoint: cp } },
      { type: "goal_acceptance_changed", data: { acceptance: goal.acceptance, reason: "new path" } },
    ];
    expect(assess(foldGoal(ev), ctx).obligations.map((o) => o.kind)).toEqual(["vision_stale"]);
    const reread: GoalEventBody = {
      type: "vision_unchanged_recorded",
      data: {
        agent_id: "agent_main",
        reason: "route holds",
        checkpoint: { goal_revision: REV0, acceptance_version: 1 },
      },
    };
    expect(assess(foldGoal([...ev, reread]), ctx).obligations).toEqual([]);
  });
  it("a paused goal shows paused and resumes by command", () => {
    const st = foldGoal([
      ...created(goal),
      { type: "goal_activation_changed", data: { activation: "stopped", note: "" } },
    ]);
    const c = encodeContract(interactionContract(st, ctx));
    expect(c.runtime_state).toBe("paused");
    expect(c.agent_channel.must_attempt).toBe(false);
    expect(c.next_cli_actions[0]?.argv).toEqual(["loopgate", "goal", "resume", "goal_csv"]);
  });
});

describe("status projection", () => {
  it("groups todos by status and class and lists gates with their scope", () => {
    const st = foldGoal([
      ...created(spec([adv("todo_one_more"), gate("todo_pub", "publish"), monitor("todo_watch")])),
      completed("todo_one_more"),
    ]);
    const v = projectStatus(st, ctx);
    expect(v.byStatus).toEqual({
      open: ["todo_pub", "todo_watch"],
      done: ["todo_one_more"],
      blocked: [],
      deferred: [],
    });
    expect(v.byClass.user_gate).toEqual(["todo_pub"]);
    expect(v.gates).toEqual([
      {
        gateId: "todo_pub",
        scope: "publish",
        global: false,
        status: "open",
        decision: null,
        scopeStatus: "pending",
        resumeWhen: null,
      },
    ]);
    // The gate covers no todo, so proving acceptance (gate-independent work) may run while it waits.
    expect(v.runtimeState).toBe("eligible");
    expect(v.selectedTodo).toBeNull();
  });
});
