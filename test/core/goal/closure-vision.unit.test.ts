// Closure includes the Vision checkpoint, acceptance that can change (stale checkpoints recomputed), and
// honest negative closure: pure rules, given events, when a command, then events or the refusal's rule.
import { describe, expect, it } from "vitest";
import type { GoalEventBody } from "../../../src/core/events/goal/goal-events.js";
import { terminalClosure } from "../../../src/core/goal/closure.js";
import { interactionContract } from "../../../src/core/goal/contract.js";
import { decide, type GoalCommand } from "../../../src/core/goal/goal-decider.js";
import { evolve, foldGoal } from "../../../src/core/goal/goal-state.js";
import type { GoalState } from "../../../src/core/goal/goal-state-shape.js";
import { handoffs } from "../../../src/core/goal/handoff.js";
import { assess } from "../../../src/core/goal/runtime-state.js";
import { visionStanding } from "../../../src/core/goal/vision.js";
import {
  accepted,
  adv,
  completed,
  created,
  REV0,
  receipt,
  revision,
  spec,
  visionRecorded,
} from "./goal-fixtures.js";

const NOW = "2026-12-01T12:00:00.000Z";
const ctx = { now: new Date(NOW), health: [] };
const goal = spec([adv("todo_fix")]);
const done = [...created(goal), completed("todo_fix")];
const nf: GoalEventBody = { type: "goal_no_followup_declared", data: { rationale: "shipped" } };
const ITEM_B = { id: "acc_b", kind: "task" as const, ref: "tasks/b.yaml", digest: "sha-b" };

/** Applies commands on top of `given` (each decided on the state the previous left), returning the state. */
function apply(
  given: GoalEventBody[],
  ...cmds: GoalCommand[]
): { state: GoalState; events: GoalEventBody[] } {
  let state = foldGoal(given);
  const events: GoalEventBody[] = [];
  for (const c of cmds)
    for (const e of decide(c, state)) {
      events.push(e);
      state = evolve(state, e);
    }
  expect(state.anomalies).toEqual([]);
  return { state, events };
}
const gaps = (s: GoalState) => terminalClosure(s, ctx).gaps.map((g) => g.kind);
const obligations = (s: GoalState) => assess(s, ctx).obligations.map((o) => `${o.kind}:${o.subject}`);

describe("closure includes the vision checkpoint", () => {
  it("everything else proved but no route on record: not terminal; the missing checkpoint is a replan obligation", () => {
    const s = foldGoal([...done, accepted(REV0), nf]);
    expect(gaps(s)).toEqual(["vision"]);
    expect(obligations(s)).toEqual(["vision_missing:agent_main"]);
    expect(assess(s, ctx).runtimeState).toBe("focus_wait");
    expect(interactionContract(s, ctx).nextCliActions[0]?.argv.slice(0, 4)).toEqual([
      "loopgate",
      "goal",
      "vision",
      "record",
    ]);
    const closed = apply([...done, accepted(REV0), nf], {
      type: "answer_replan",
      answer: {
        agent_id: "agent_main",
        obligation: "vision_missing:agent_main",
        vision: { kind: "patch", route: "fix, then prove", patch: "the first route", reason: "on record" },
      },
    });
    expect(closed.events.map((e) => e.type)).toEqual(["vision_recorded"]);
    expect(terminalClosure(closed.state, ctx)).toEqual({ terminal: true, gaps: [], outcome: "achieved" });
  });
  it("the missing checkpoint is asked only once the frontier is exhausted and acceptance audited", () => {
    expect(obligations(foldGoal(created(goal)))).toEqual([]);
    expect(obligations(foldGoal(done))).toEqual([]); // acceptance not run yet: the acceptance turn comes first
    expect(obligations(foldGoal([...done, accepted(REV0, { status: "ESCALATED" })]))).toEqual([
      "replan_acceptance_failed:acc_all",
      "vision_missing:agent_main",
    ]);
  });
  it("a bare first route is a delta; once a route is followed, a bare patch is still refused", () => {
    const first = apply(done, {
      type: "answer_replan",
      answer: {
        agent_id: "agent_main",
        obligation: "o",
        vision: { kind: "patch", route: "r1", patch: "p", reason: "r" },
      },
    });
    expect(first.events.map((e) => e.type)).toEqual(["vision_recorded"]);
    expect(() =>
      decide(
        {
          type: "answer_replan",
          answer: {
            agent_id: "agent_main",
            obligation: "o",
            vision: { kind: "patch", route: "r2", patch: "p", reason: "r" },
          },
        },
        first.state,
      ),
    ).toThrow(/patch_without_delta/);
  });
  it("a vision created with the goal (the goal file's vision) is its first checkpoint", () => {
    const events = decide(
      { type: "create_goal", goal: { ...goal, vision: "fix, then prove" } },
      foldGoal([]),
    );
    expect(events.map((e) => e.type)).toEqual(["goal_created", "todo_added", "vision_recorded"]);
    expect(visionStanding(foldGoal(events))).toMatchObject({ kind: "fresh", agentId: "agent_main" });
  });
});

describe("acceptance can change; checkpoints on the old one go stale", () => {
  const base = [...done, visionRecorded(), accepted(REV0)];
  it("add: one goal_acceptance_changed with the whole list and its delta; the vision is stale, a replan obligation", () => {
    const { state, events } = apply(base, { type: "add_acceptance", item: ITEM_B, reason: "a second proof" });
    expect(events).toEqual([
      {
        type: "goal_acceptance_changed",
        data: {
          acceptance: [...goal.acceptance, ITEM_B],
          reason: "a second proof",
          delta: [{ change: "added", item_id: "acc_b" }],
        },
      },
    ]);
    expect(state.acceptanceVersion).toBe(1);
    expect(visionStanding(state).kind).toBe("stale");
    expect(obligations(state)).toEqual(["vision_stale:agent_main"]);
    expect(gaps(state)).toEqual(["vision", "acceptance", "no_followup"]);
    const reread = apply([...base, ...events], {
      type: "record_vision_unchanged",
      agentId: "agent_main",
      reason: "holds",
    });
    expect(visionStanding(reread.state).kind).toBe("fresh");
    expect(obligations(reread.state)).toEqual([]);
  });
  it("retire: the item leaves the list; what is refused names why (unknown, last, no reason, twice)", () => {
    const two = apply(base, { type: "add_acceptance", item: ITEM_B, reason: "r" });
    const { state } = apply([...base, ...two.events], {
      type: "retire_acceptance",
      acceptanceId: "acc_b",
      reason: "dropped",
    });
    expect(state.acceptance.map((a) => a.id)).toEqual(["acc_all"]);
    expect(state.acceptanceVersion).toBe(2);
    expect(() => decide({ type: "retire_acceptance", acceptanceId: "acc_x", reason: "r" }, state)).toThrow(
      /not an acceptance item/,
    );
    expect(() => decide({ type: "retire_acceptance", acceptanceId: "acc_all", reason: "r" }, state)).toThrow(
      /acceptance_not_empty/,
    );
    expect(() => decide({ type: "add_acceptance", item: ITEM_B, reason: " " }, state)).toThrow(
      /needs a reason/,
    );
    expect(() =>
      decide({ type: "add_acceptance", item: goal.acceptance[0] as typeof ITEM_B, reason: "r" }, state),
    ).toThrow(/already an item/);
    expect(() =>
      decide({ type: "change_acceptance", acceptance: [ITEM_B, ITEM_B], reason: "r" }, state),
    ).toThrow(/appears twice/);
  });
  it("a replan answer carries the acceptance delta with the route read against it (fresh)", () => {
    const { state, events } = apply(base, {
      type: "answer_replan",
      answer: {
        agent_id: "agent_main",
        obligation: "o",
        acceptance: {
          acceptance: [ITEM_B],
          reason: "a new path",
          delta: [
            { change: "added", item_id: "acc_b" },
            { change: "retired", item_id: "acc_all" },
          ],
        },
        vision: { kind: "patch", route: "the new path", patch: "acceptance moved", reason: "new path" },
      },
    });
    expect(events.map((e) => e.type)).toEqual(["goal_acceptance_changed", "vision_patched"]);
    expect(visionStanding(state).kind).toBe("fresh");
    expect(obligations(state)).toEqual([]);
  });
});

describe("vision retired and superseded", () => {
  const base = [...done, visionRecorded(), accepted(REV0), nf];
  it("a retired route, read against the current acceptance, closes honestly; read against an older one it is stale", () => {
    const retired = apply(base, { type: "retire_vision", agentId: "agent_main", reason: "no more route" });
    expect(retired.state.visions.agent_main?.last).toBe("retired");
    expect(terminalClosure(retired.state, ctx).terminal).toBe(true);
    expect(() =>
      decide({ type: "retire_vision", agentId: "agent_main", reason: "again" }, retired.state),
    ).toThrow(/no followed vision/);
    expect(() =>
      decide({ type: "record_vision_unchanged", agentId: "agent_main", reason: "r" }, retired.state),
    ).toThrow(/follows no route \(retired\)/);
    const changed = apply([...base, ...retired.events], {
      type: "add_acceptance",
      item: ITEM_B,
      reason: "r",
    });
    expect(obligations(changed.state)).toContain("vision_stale:agent_main");
    // Recording a route again re-reads it.
    const again = apply([...base, ...retired.events, ...changed.events], {
      type: "record_vision",
      agentId: "agent_main",
      route: "again",
    });
    expect(visionStanding(again.state)).toMatchObject({ kind: "fresh" });
  });
  it("superseded by another agent's route: closure follows the replacement; without one it is refused", () => {
    expect(() =>
      decide(
        { type: "supersede_vision", agentId: "agent_main", byAgentId: "agent_two", reason: "r" },
        foldGoal(base),
      ),
    ).toThrow(/follows no route yet/);
    expect(() =>
      decide(
        { type: "supersede_vision", agentId: "agent_main", byAgentId: "agent_main", route: "x", reason: "r" },
        foldGoal(base),
      ),
    ).toThrow(/superseded_by_another/);
    const { state, events } = apply(base, {
      type: "supersede_vision",
      agentId: "agent_main",
      byAgentId: "agent_two",
      route: "two's route",
      reason: "handed over",
    });
    expect(events.map((e) => e.type)).toEqual(["vision_recorded", "vision_retired"]);
    expect(state.visions.agent_main).toMatchObject({ last: "superseded", supersededBy: "agent_two" });
    expect(visionStanding(state)).toMatchObject({ kind: "fresh", agentId: "agent_two" });
    expect(terminalClosure(state, ctx).terminal).toBe(true);
  });
  it("the fold refuses a forged retirement (no route to retire, or a replacement that is not recorded)", () => {
    const cp = { goal_revision: REV0, acceptance_version: 0 };
    const s = foldGoal([
      ...done,
      {
        type: "vision_retired",
        data: { agent_id: "agent_main", reason: "r", superseded_by: null, checkpoint: cp },
      },
      visionRecorded(),
      {
        type: "vision_retired",
        data: { agent_id: "agent_main", reason: "r", superseded_by: "nobody", checkpoint: cp },
      },
    ]);
    expect(s.anomalies).toHaveLength(2);
    expect(s.visions.agent_main?.last).toBe("recorded");
  });
});

describe("honest negative closure", () => {
  const gated = spec([
    adv("todo_fix"),
    { id: "todo_upstream", content: "the upstream API", class: "blocker" },
  ]);
  const base = [...created(gated), completed("todo_fix"), visionRecorded()];
  const url = { kind: "url" as const, url: "https://example.com/upstream/issues/1" };
  it("blocked: only a verified blocker (a blocked todo accepted with evidence) may be cited; then it closes, as blocked", () => {
    const s0 = foldGoal(base);
    expect(() =>
      decide({ type: "declare_no_followup", rationale: "r", outcome: "blocked", cites: "todo_upstream" }, s0),
    ).toThrow(/negative_needs_evidence/);
    expect(() =>
      decide(
        {
          type: "attest_todo",
          todoId: "todo_upstream",
          outcome: "blocker_accepted",
          note: "n",
          evidence: [url],
        },
        s0,
      ),
    ).toThrow(/blocker_accepted_from_blocked/);
    const { state, events } = apply(
      base,
      { type: "block_todo", todoId: "todo_upstream", reason: "upstream removed the API" },
      {
        type: "attest_todo",
        todoId: "todo_upstream",
        outcome: "blocker_accepted",
        note: "confirmed upstream",
        evidence: [url],
        by: "alice",
      },
      {
        type: "declare_no_followup",
        rationale: "cannot be done upstream",
        outcome: "blocked",
        cites: "todo_upstream",
      },
    );
    expect(events.map((e) => e.type)).toEqual(["todo_blocked", "todo_attested", "goal_no_followup_declared"]);
    const closure = terminalClosure(state, ctx);
    // Acceptance never ran: the verified blocker stands in for it, and the goal closes as blocked, never achieved.
    expect(closure).toEqual({ terminal: true, gaps: [], outcome: "blocked" });
    expect(state.acceptanceReceipts).toEqual({});
  });
  it("not_achieved needs coverage: every acceptance item ran on the current revision, and not all passed", () => {
    const s0 = foldGoal(
      base.concat({ type: "todo_closed_no_followup", data: { todo_id: "todo_upstream", rationale: "r" } }),
    );
    expect(() =>
      decide({ type: "declare_no_followup", rationale: "r", outcome: "not_achieved" }, s0),
    ).toThrow(/negative_needs_coverage/);
    const failed = [
      ...base,
      {
        type: "todo_closed_no_followup",
        data: { todo_id: "todo_upstream", rationale: "r" },
      } as GoalEventBody,
      accepted(REV0, { status: "ESCALATED" }),
    ];
    const { state } = apply(failed, {
      type: "declare_no_followup",
      rationale: "it cannot pass",
      outcome: "not_achieved",
    });
    expect(terminalClosure(state, ctx)).toEqual({ terminal: true, gaps: [], outcome: "not_achieved" });
    // Coverage is on the current revision: a new revision asks for it again.
    expect(gaps(evolve(state, revision(REV0, "rev1")))).toEqual(["acceptance"]);
    const proved = foldGoal([...failed.slice(0, -1), accepted(REV0)]);
    expect(() =>
      decide({ type: "declare_no_followup", rationale: "r", outcome: "not_achieved" }, proved),
    ).toThrow(/is achieved/);
  });
  it("rolled_back cites a compensated revision; any other revision is refused", () => {
    const s = foldGoal([...base, revision(REV0, "rev1")]);
    expect(() =>
      decide({ type: "declare_no_followup", rationale: "r", outcome: "rolled_back", cites: "rev1" }, s),
    ).toThrow(/no compensation reverted rev1/);
    const { state } = apply(
      [...base, revision(REV0, "rev1")],
      {
        type: "compensate_change",
        revertedRevision: "rev1",
        revertRevision: "rev2",
        reason: "broke users",
        successor: { id: "todo_after", content: "after the revert", class: "user_action" },
      },
      { type: "close_no_followup", todoId: "todo_after", rationale: "nothing after" },
      { type: "close_no_followup", todoId: "todo_upstream", rationale: "moot" },
      {
        type: "declare_no_followup",
        rationale: "rolled back for good",
        outcome: "rolled_back",
        cites: "rev1",
      },
    );
    expect(terminalClosure(state, ctx)).toEqual({ terminal: true, gaps: [], outcome: "rolled_back" });
  });
  it("an achieved intent still needs every acceptance item proved", () => {
    const s = foldGoal([
      ...base,
      { type: "todo_closed_no_followup", data: { todo_id: "todo_upstream", rationale: "r" } },
      accepted(REV0, { status: "ESCALATED" }),
      nf,
    ]);
    expect(gaps(s)).toContain("acceptance");
    expect(terminalClosure(s, ctx).terminal).toBe(false);
  });
});

describe("a person's step with evidence, claims, handoffs", () => {
  const g = spec([
    adv("todo_fix"),
    { id: "todo_gate", content: "publish?", class: "user_gate", decision_scope: "publish" },
    { id: "todo_publish", content: "publish", class: "user_action", required_decision_scopes: ["publish"] },
    { id: "todo_cix", content: "CI is red", class: "blocker", unblocks_todo_id: "todo_fix" },
    { id: "todo_flaky", content: "flaky runner", class: "blocker" },
  ]);
  const base = created(g);
  const file = { kind: "file" as const, name: "release.txt", sha256: "a".repeat(64), bytes: 12 };
  it("done on a person's word needs a note, evidence, the decisions in place, and a user_action or task-less blocker", () => {
    const s = foldGoal(base);
    const attest = (
      todoId: string,
      extra: Partial<GoalCommand & { type: "attest_todo" }> = {},
    ): GoalCommand => ({
      type: "attest_todo",
      todoId,
      outcome: "done",
      note: "published v1",
      evidence: [file],
      ...extra,
    });
    expect(() => decide(attest("todo_publish"), s)).toThrow(
      /decision_scope: todo_publish needs scope publish/,
    );
    expect(() => decide(attest("todo_fix"), s)).toThrow(/done_needs_receipt/);
    expect(() => decide(attest("todo_gate"), s)).toThrow(/done_needs_receipt/);
    expect(() => decide(attest("todo_flaky", { evidence: [] }), s)).toThrow(/attest_needs_evidence/);
    expect(() => decide(attest("todo_flaky", { note: " " }), s)).toThrow(/attest_needs_note/);
    expect(() =>
      decide(attest("todo_flaky", { evidence: [{ kind: "run", receipt: receipt("x") }] }), s),
    ).toThrow(/a person's step is attested by a link or a file/);
    const { state } = apply(
      base,
      { type: "decide_gate", todoId: "todo_gate", decision: "approve" },
      attest("todo_publish", { by: "alice" }),
    );
    expect(state.todos.todo_publish).toMatchObject({
      status: "done",
      attestation: { outcome: "done", by: "alice", evidence: [file] },
    });
  });
  it("the fold refuses a forged attestation of a task's todo (only a run's SUCCESS proves it)", () => {
    const s = foldGoal([
      ...base,
      { type: "todo_attested", data: { todo_id: "todo_fix", outcome: "done", note: "n", evidence: [file] } },
    ]);
    expect(s.todos.todo_fix?.status).toBe("open");
    expect(s.anomalies).toHaveLength(1);
  });
  it("a blocker with a target holds it back until cleared; cleared, it routes to the target", () => {
    const s = foldGoal(base);
    expect(assess(s, ctx).waits).toContainEqual({ todoId: "todo_fix", why: "held back by blocker todo_cix" });
    const { state } = apply(base, {
      type: "attest_todo",
      todoId: "todo_cix",
      outcome: "done",
      note: "CI green again",
      evidence: [file],
    });
    expect(assess(state, ctx).selection).toMatchObject({ kind: "todo", todoId: "todo_fix" });
    expect(state.todos.todo_cix?.status).toBe("done");
  });
  it("handoffs reachable: cleared without a successor (an obligation) until one is added; superseded", () => {
    const cleared = apply(base, {
      type: "attest_todo",
      todoId: "todo_flaky",
      outcome: "done",
      note: "fixed",
      evidence: [file],
    });
    expect(handoffs(cleared.state).find((h) => h.todoId === "todo_flaky")?.state).toBe(
      "cleared_without_successor",
    );
    expect(obligations(cleared.state)).toContain("handoff_without_successor:todo_flaky");
    const next = apply([...base, ...cleared.events], {
      type: "add_todo",
      todo: { id: "todo_after_flaky", content: "watch the runner", class: "user_action" },
      successorOf: "todo_flaky",
    });
    expect(handoffs(next.state).find((h) => h.todoId === "todo_flaky")?.state).toBe("cleared_with_successor");
    expect(obligations(next.state)).not.toContain("handoff_without_successor:todo_flaky");
    const sup = apply(base, {
      type: "supersede_todo",
      todoId: "todo_cix",
      successor: {
        id: "todo_ci_new",
        content: "CI on the new runner",
        class: "blocker",
        unblocks_todo_id: "todo_fix",
      },
    });
    expect(handoffs(sup.state).map((h) => [h.todoId, h.state])).toContainEqual(["todo_cix", "superseded"]);
    expect(assess(sup.state, ctx).waits).toContainEqual({
      todoId: "todo_fix",
      why: "held back by blocker todo_ci_new",
    });
  });
  it("a claim is a routing signal: another's claim is left alone and refused to a second claimant; the goal's agent takes its own first", () => {
    const two = spec([adv("todo_aaa"), adv("todo_bbb")]);
    const claimed = apply(created(two), { type: "claim_todo", todoId: "todo_aaa", agentId: "bob" });
    expect(assess(claimed.state, ctx).selection).toMatchObject({ todoId: "todo_bbb" });
    expect(() => decide({ type: "claim_todo", todoId: "todo_aaa", agentId: "carol" }, claimed.state)).toThrow(
      /claim_held: todo_aaa is claimed by bob/,
    );
    expect(() =>
      decide({ type: "release_todo", todoId: "todo_aaa", agentId: "carol" }, claimed.state),
    ).toThrow(/not claimed by carol/);
    const own = apply(created(two), { type: "claim_todo", todoId: "todo_bbb", agentId: "agent_main" });
    expect(assess(own.state, ctx).selection).toMatchObject({ todoId: "todo_bbb" });
  });
});
