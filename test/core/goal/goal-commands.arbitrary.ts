/** fast-check generators of goal command sequences, and a runner that applies the accepted ones. */
import fc from "fast-check";
import type { GoalEventBody } from "../../../src/core/events/goal/goal-events.js";
import { decide, type GoalCommand } from "../../../src/core/goal/goal-decider.js";
import { evolve } from "../../../src/core/goal/goal-state.js";
import { type GoalState, initialState } from "../../../src/core/goal/goal-state-shape.js";
import { DomainError } from "../../../src/core/kernel/errors.js";
import { adv, GOAL, gate, REV0, receipt, spec } from "./goal-fixtures.js";

export const REVS = [REV0, "rev1", "rev2", "rev3", "rev4"];
/** A second acceptance item the steps add and retire (no receipt ever proves it). */
const ACC_TWO = { id: "acc_two", kind: "task" as const, ref: "tasks/two.yaml", digest: "sha-two" };
export const POOL = ["todo_aaa", "todo_bbb", "todo_ccc", "todo_gate", "todo_usr", "todo_blk"];

/** A goal with advancement work, a dependency, a gated todo, a gate, a user action and a blocker. */
export const randomGoal = spec(
  [
    adv("todo_aaa"),
    adv("todo_bbb", { depends_on: ["todo_aaa"] }),
    adv("todo_ccc", { required_decision_scopes: ["pub"] }),
    gate("todo_gate", "pub"),
    { id: "todo_usr", content: "create the key", class: "user_action" },
    { id: "todo_blk", content: "unflake CI", class: "blocker", unblocks_todo_id: "todo_bbb" },
  ],
  { budget: { window_seconds: 86_400, turns_per_window: 3 } },
);

const todo = fc.constantFrom(...POOL);
const rev = fc.integer({ min: 0, max: REVS.length - 1 }).map((i) => REVS[i] as string);
const time = fc.integer({ min: 0, max: 72 }).map((h) => new Date(Date.UTC(2026, 11, 1, h)).toISOString());

/** A command "template": some fields are filled from the state when it runs (the next revision). */
export type Step = GoalCommand | { type: "next_revision" };

export const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    type: fc.constant("complete_todo" as const),
    todoId: todo,
    receipt: fc
      .record({
        ok: fc.boolean(),
        rightTask: fc.boolean(),
        rev,
        n: fc.integer({ min: 0, max: 20 }),
        who: todo,
      })
      .map((r) =>
        receipt(r.rightTask ? "" : r.who, {
          run_id: `run_${r.n}`,
          status: r.ok ? "SUCCESS" : "ESCALATED",
          goal_revision: r.rev,
        }),
      ),
  }),
  fc.constant({ type: "next_revision" as const }),
  fc.record({
    type: fc.constant("decide_gate" as const),
    todoId: fc.constant("todo_gate"),
    decision: fc.constantFrom("approve" as const, "reject" as const, "cancel" as const),
  }),
  fc.record({
    type: fc.constant("close_no_followup" as const),
    todoId: todo,
    rationale: fc.constantFrom("obsolete", ""),
  }),
  fc.record({
    type: fc.constant("defer_todo" as const),
    todoId: todo,
    resumeWhen: fc.oneof(
      time.map((at) => ({ kind: "at", at })),
      fc.constant("later"),
    ),
  }),
  fc.record({ type: fc.constant("reopen_todo" as const), todoId: todo }),
  fc.record({ type: fc.constant("block_todo" as const), todoId: todo, reason: fc.constant("broken") }),
  fc
    .record({
      type: fc.constant("supersede_todo" as const),
      todoId: todo,
      n: fc.integer({ min: 0, max: 9 }),
    })
    .map(
      (c): GoalCommand => ({
        type: "supersede_todo",
        todoId: c.todoId,
        successor: adv(`todo_succ${c.n}`),
      }),
    ),
  fc.record({ ok: fc.boolean(), rev, n: fc.integer({ min: 0, max: 20 }) }).map(
    (r): GoalCommand => ({
      type: "record_acceptance",
      acceptanceId: "acc_all",
      receipt: receipt("acceptance", {
        run_id: `run_acc${r.n}`,
        status: r.ok ? "SUCCESS" : "TOOL_FAILURE",
        goal_revision: r.rev,
      }),
    }),
  ),
  fc.constant({ type: "declare_no_followup" as const, rationale: "nothing more to do" }),
  fc
    .constantFrom("route one", "route two")
    .map((route): GoalCommand => ({ type: "record_vision", agentId: "agent_main", route })),
  fc.constant<GoalCommand>({ type: "retire_vision", agentId: "agent_main", reason: "the route ends" }),
  fc.constant<GoalCommand>({ type: "add_acceptance", item: ACC_TWO, reason: "a second proof" }),
  fc.constant<GoalCommand>({ type: "retire_acceptance", acceptanceId: "acc_two", reason: "not needed" }),
  fc.constant({ type: "stop_goal" as const }),
  fc.constant({ type: "resume_goal" as const }),
  fc.record({ n: fc.integer({ min: 0, max: 9 }), at: time }).map(
    (s): GoalCommand => ({
      type: "record_spend",
      turnId: `turn_${s.n}`,
      at: s.at,
      turns: 1,
      tokens: 10,
      costUsd: 0,
    }),
  ),
);

/** Steps that move a goal toward closure (receipts on the current revision), to reach deep states often. */
export const closingStep: fc.Arbitrary<Step> = fc.oneof(
  todo.map((id): Step => ({ type: "close_no_followup", todoId: id, rationale: "not needed" })),
  fc.constantFrom("todo_aaa", "todo_bbb", "todo_ccc").map(
    (id): Step => ({
      type: "complete_todo",
      todoId: id,
      receipt: receipt("", { run_id: `run_c_${id}`, goal_revision: "current" }),
    }),
  ),
  fc.constant<Step>({ type: "decide_gate", todoId: "todo_gate", decision: "approve" }),
  fc.nat(9).map(
    (n): Step => ({
      type: "record_acceptance",
      acceptanceId: "acc_all",
      receipt: receipt("acceptance", { run_id: `run_ok${n}`, goal_revision: "current" }),
    }),
  ),
  fc.constant<Step>({ type: "declare_no_followup", rationale: "nothing more to do" }),
  fc.constant<Step>({ type: "record_vision", agentId: "agent_main", route: "the route" }),
);

/** Closes everything, proves acceptance and declares no_followup (all of it, or all but one step). */
const finish: Step[] = [
  ...POOL.map((id): Step => ({ type: "close_no_followup", todoId: id, rationale: "not needed" })),
  {
    type: "record_acceptance",
    acceptanceId: "acc_all",
    receipt: receipt("acceptance", { run_id: "run_fin", goal_revision: "current" }),
  },
  { type: "retire_acceptance", acceptanceId: "acc_two", reason: "not needed" },
  { type: "record_vision", agentId: "agent_main", route: "the final route" },
  { type: "declare_no_followup", rationale: "nothing more to do" },
];

/** Random steps that mostly close, then (often) the whole finish, or the finish with one step left out. */
export const closingSteps: fc.Arbitrary<Step[]> = fc
  .tuple(
    fc.array(fc.oneof({ weight: 3, arbitrary: closingStep }, { weight: 1, arbitrary: step }), {
      maxLength: 30,
    }),
    fc.integer({ min: -2, max: finish.length - 1 }),
    fc.array(step, { maxLength: 2 }),
  )
  .map(([steps, skip, tail]) =>
    skip === -2 ? steps : [...steps, ...finish.filter((_, i) => i !== skip), ...(skip === -1 ? tail : [])],
  );

/** Fills a receipt whose task name is "" with the todo's own task, so many receipts do match. */
function concrete(s: Step, state: GoalState): GoalCommand {
  if (s.type === "next_revision") {
    const i = REVS.indexOf(state.revision);
    const next = REVS[i + 1] ?? `${state.revision}x`;
    return { type: "record_revision", revision: next, previous: state.revision, reason: "commit" };
  }
  if (s.type === "record_acceptance" && s.receipt.goal_revision === "current")
    return { ...s, receipt: { ...s.receipt, goal_revision: state.revision } };
  if (s.type === "complete_todo" && s.receipt) {
    const t = state.todos[s.todoId];
    const r = s.receipt.goal_revision === "current" ? state.revision : s.receipt.goal_revision;
    const own = s.receipt.task_id === "";
    return {
      ...s,
      receipt: {
        ...s.receipt,
        goal_revision: r,
        ...(own
          ? { task_id: t?.task?.task_id ?? "none", task_digest: t?.task?.digest ?? "none", goal_id: GOAL }
          : {}),
      },
    };
  }
  return s;
}

/** Runs the steps from a created goal: each accepted command's events are folded; refusals are skipped. */
export function run(steps: readonly Step[]): {
  events: GoalEventBody[];
  batches: GoalEventBody[][];
  state: GoalState;
} {
  let state = initialState();
  const batches: GoalEventBody[][] = [decide({ type: "create_goal", goal: randomGoal }, state)];
  state = (batches[0] as GoalEventBody[]).reduce(evolve, state);
  for (const s of steps) {
    let out: GoalEventBody[];
    try {
      out = decide(concrete(s, state), state);
    } catch (e) {
      if (e instanceof DomainError) continue;
      throw e;
    }
    batches.push(out);
    state = out.reduce(evolve, state);
  }
  return { events: batches.flat(), batches, state };
}
