import { describe, expect, expectTypeOf, it } from "vitest";
import {
  type GoalEventBody,
  type GoalEventType,
  goalEventOrigin,
  goalEventTypes,
  isGoalEventType,
  type TodoSpec,
} from "../../../../src/core/events/goal/goal-events.js";
import type { TurnEvent, TurnLeaseEvent } from "../../../../src/core/events/goal/turn-events.js";
import {
  type EventBody,
  LoopgateEvent,
  type Origin,
  originOf,
  stampOrigin,
} from "../../../../src/core/events/loopgate-event.js";
import { type GoalCommand, goalDecider } from "../../../../src/core/goal/goal-decider.js";
import type { GoalState } from "../../../../src/core/goal/goal-state-shape.js";
import {
  DEFAULT_NOTIFY_RETRY,
  dueNotifications,
  foldNotify,
  occurrences,
} from "../../../../src/core/goal/notify.js";
import type { TurnCommand } from "../../../../src/core/goal/turn/turn-commands.js";
import { turnDecider } from "../../../../src/core/goal/turn/turn-decider.js";
import {
  decideTurnLease,
  evolveTurnLease,
  type TurnLease,
} from "../../../../src/core/goal/turn/turn-lease.js";
import type { TurnState } from "../../../../src/core/goal/turn/turn-state.js";
import { adv, gate, receipt, spec } from "../../goal/goal-fixtures.js";
import { HINT, HX, ID, KEY, OTHER, RECEIPT, REV, SA, USAGE, WB } from "../../goal/turn/turn-fixtures.js";

// Each goal-stream type is declared once (core/events/goal), its TypeScript type inferred from its schema.
// What keeps the declaration and the code that writes it from drifting apart is checked here on what the
// deciders really emit: every event the goal decider, the turn decider and the turn lease decide is of a
// declared goal type, the origin its writer appends it with is one its declaration allows (so the store
// keeps it, never re-stamps it), and it survives the trip through the log (JSON, then the schema) unchanged:
// no field the schema would drop, none it would refuse. Every declared type is reached, so none goes
// unchecked and none is declared for nothing.

const T0 = "2026-12-01T10:00:00.000Z";
const T1 = "2026-12-01T10:01:00.000Z";
const T2 = "2026-12-01T10:02:00.000Z";
const T3 = "2026-12-01T10:03:00.000Z";
const EXP = "2026-12-01T11:00:00.000Z";
const AGENT = "agent_main";
const W = "todo_watch";
const SUCC: TodoSpec = { id: "todo_react", content: "adapt to the new report", class: "user_action" };
const watch: TodoSpec = {
  id: W,
  content: "watch upstream reports",
  class: "continuous_monitor",
  monitor: {
    argv: ["cat", "reports.txt"],
    cadence_seconds: 60,
    timeout_seconds: 10,
    expires_at: EXP,
    max_no_change_before_replan: 2,
  },
};

/** Applies each command to the decider's own state; a refusal fails the test (the script must be accepted). */
function drive<S, C, E>(
  d: { initialState(): S; evolve(s: S, e: E): S; decide(c: C, s: S): E[] },
  commands: readonly C[],
): E[][] {
  let state = d.initialState();
  return commands.map((c) => {
    const out = d.decide(c, state);
    state = out.reduce(d.evolve, state);
    return out;
  });
}

/** Who issues a goal command in loopgate: a person (the CLI) or loopgate itself (a governed turn). */
type Issuer = "operator" | "runtime";
const op = (c: GoalCommand): [Issuer, GoalCommand] => ["operator", c];
const rt = (c: GoalCommand): [Issuer, GoalCommand] => ["runtime", c];

const goalScript: [Issuer, GoalCommand][] = [
  op({
    type: "create_goal",
    goal: spec([
      adv("todo_aaa"),
      adv("todo_bbb"),
      adv("todo_ccc", { required_decision_scopes: ["pub"] }),
      gate("todo_gate", "pub"),
      watch,
    ]),
  }),
  op({ type: "stop_goal", note: "a pause" }),
  op({ type: "resume_goal", note: "back" }),
  op({ type: "change_budget", budget: { window_seconds: 3600, turns_per_window: 4 }, reason: "slower" }),
  op({
    type: "change_acceptance",
    acceptance: [{ id: "acc_all", kind: "task", ref: "tasks/acceptance.yaml", digest: "sha-acceptance-2" }],
    reason: "a stricter check",
  }),
  rt({ type: "claim_todo", todoId: "todo_aaa", agentId: AGENT }),
  op({ type: "release_todo", todoId: "todo_aaa", agentId: AGENT }),
  op({ type: "block_todo", todoId: "todo_bbb", reason: "upstream is down" }),
  op({ type: "reopen_todo", todoId: "todo_bbb", note: "upstream is back" }),
  rt({ type: "defer_todo", todoId: "todo_bbb", resumeWhen: { kind: "at", at: EXP }, note: "later" }),
  op({ type: "supersede_todo", todoId: "todo_bbb", successor: adv("todo_bbb2"), reason: "split" }),
  rt({ type: "close_no_followup", todoId: "todo_bbb2", rationale: "not needed after all" }),
  op({ type: "decide_gate", todoId: "todo_gate", decision: "approve", note: "go" }),
  // `goal todo done` by a person: the receipt is still loopgate's, derived from the run.
  op({
    type: "complete_todo",
    todoId: "todo_aaa",
    receipt: receipt("todo_aaa"),
    writeback: { revision: "rev1", reason: "accepted change", turnId: "t1" },
  }),
  rt({ type: "record_revision", revision: "rev2", previous: "rev1", reason: "commit" }),
  rt({
    type: "record_acceptance",
    acceptanceId: "acc_all",
    receipt: receipt("acceptance", { task_digest: "sha-acceptance-2", goal_revision: "rev2" }),
  }),
  rt({ type: "record_spend", turnId: "t1", at: T0, turns: 1, tokens: 10, costUsd: 0.01 }),
  rt({ type: "record_vision", agentId: AGENT, route: "route A" }),
  op({ type: "record_vision_unchanged", agentId: AGENT, reason: "still the route" }),
  // Monitor: baseline, no change, a material change (observation + successor), a failed poll, completion.
  rt({ type: "record_monitor_poll", todoId: W, operationId: "op1", now: new Date(T0), resultHash: "h1" }),
  rt({ type: "record_monitor_poll", todoId: W, operationId: "op2", now: new Date(T1), resultHash: "h1" }),
  rt({
    type: "record_monitor_poll",
    todoId: W,
    operationId: "op3",
    now: new Date(T2),
    resultHash: "h2",
    generation: 1,
    successor: SUCC,
  }),
  rt({
    type: "record_monitor_poll_failure",
    todoId: W,
    operationId: "op4",
    now: new Date(T3),
    failure: "timeout",
    exitCode: null,
    detail: "timed out after 10s",
  }),
  op({
    type: "complete_monitor",
    todoId: W,
    operationId: "op5",
    now: new Date(EXP),
    reason: "stopped by a person",
    followup: { kind: "no_followup", rationale: "the reporting window closed" },
  }),
  op({
    type: "compensate_change",
    revertedRevision: "rev2",
    revertRevision: "rev3",
    reason: "rev2 broke CRLF input",
    successor: { id: "todo_redo", content: "redo it without the regression", class: "user_action" },
    turnId: "t2",
  }),
  // A person's step on the user_action successor, recorded with its evidence; then the agent's route ends.
  op({
    type: "attest_todo",
    todoId: "todo_redo",
    outcome: "done",
    note: "redone by hand and published",
    by: "ana",
    evidence: [{ kind: "url", url: "https://example.com/release/2" }],
  }),
  op({ type: "retire_vision", agentId: AGENT, reason: "the stage is over" }),
  op({ type: "declare_no_followup", rationale: "nothing more to do" }),
];

/** A goal whose every advancement todo is done and whose acceptance failed: it owes a replan. */
const owingReplan: [Issuer, GoalCommand][] = [
  op({ type: "create_goal", goal: spec([adv("todo_aaa")]) }),
  rt({ type: "complete_todo", todoId: "todo_aaa", receipt: receipt("todo_aaa") }),
  rt({ type: "record_vision", agentId: AGENT, route: "route A" }),
  rt({
    type: "record_acceptance",
    acceptanceId: "acc_all",
    receipt: receipt("acceptance", { status: "ESCALATED" }),
  }),
];
const OBL = "replan_acceptance_failed:acc_all";
const replanScripts: [Issuer, GoalCommand][][] = [
  [
    ...owingReplan,
    rt({
      type: "answer_replan",
      answer: {
        agent_id: AGENT,
        obligation: OBL,
        vision: { kind: "patch", patch: "add a fix step", route: "route B", reason: "acceptance failed" },
        todos: [{ todo: adv("todo_fix") }],
        operation_id: "op_plan1",
      },
    }),
  ],
  [
    ...owingReplan,
    rt({ type: "answer_replan", answer: { agent_id: AGENT, obligation: OBL, operation_id: "op_p2" } }),
  ],
  [
    ...owingReplan,
    op({
      type: "answer_replan",
      answer: {
        agent_id: AGENT,
        obligation: OBL,
        vision: { kind: "close", reason: "stage done" },
        todos: [{ todo: adv("todo_next") }],
      },
    }),
  ],
];

/** One turn settled end to end, and turns that fail, rebase, read back, lose their ACK and are given back. */
const bind = (identity = ID): TurnCommand => ({
  type: "bind",
  identity,
  work: { kind: "todo", todo_id: "todo_parse" },
  baseRevision: REV,
});
const toWriteback: TurnCommand[] = [
  bind(),
  { type: "prepare_effect", identity: ID, phase: "host_execute", effectRef: HX },
  { type: "record_host_execute", identity: ID, effectRef: HX, runRef: "run_1" },
  {
    type: "record_typed_result",
    identity: ID,
    result: {
      kind: "envelope",
      run_id: "run_1",
      task_id: "parse",
      status: "SUCCESS",
      envelope_digest: "env_1",
    },
  },
  { type: "record_validation", identity: ID, receipt: RECEIPT },
  { type: "prepare_effect", identity: ID, phase: "durable_writeback", effectRef: WB },
];
const turnScripts: TurnCommand[][] = [
  [
    ...toWriteback,
    {
      type: "record_writeback",
      identity: ID,
      effectRef: WB,
      outcome: { kind: "accepted", commit: "c1", newRevision: "rev_b" },
    },
    { type: "record_spend", identity: ID, spendKey: KEY, usage: USAGE, outcome: { kind: "accepted" } },
    { type: "record_scheduler_apply", identity: ID, effectRef: SA, hint: HINT },
    {
      type: "record_scheduler_ack",
      identity: ID,
      effectRef: SA,
      outcome: { kind: "failed", reason: "host down" },
    },
  ],
  [
    ...toWriteback,
    {
      type: "record_writeback",
      identity: ID,
      effectRef: WB,
      outcome: { kind: "cas_conflict", currentRevision: "rev_c" },
    },
    { type: "rebase", identity: ID, toRevision: "rev_c" },
  ],
  [
    ...toWriteback,
    {
      type: "resolve_readback",
      identity: ID,
      phase: "durable_writeback",
      effectRef: WB,
      readback: { found: "absent" },
    },
  ],
  [
    ...toWriteback,
    {
      type: "record_writeback",
      identity: ID,
      effectRef: WB,
      outcome: { kind: "accepted", commit: "c1", newRevision: "rev_b" },
    },
    { type: "record_spend", identity: ID, spendKey: KEY, usage: USAGE, outcome: { kind: "accepted" } },
    { type: "record_scheduler_apply", identity: ID, effectRef: SA, hint: HINT },
    {
      type: "record_scheduler_ack",
      identity: ID,
      effectRef: SA,
      outcome: { kind: "ack", mode: "host_match" },
    },
  ],
  [bind(OTHER), { type: "release", identity: OTHER, reason: "the host gave up" }],
];

/** The turn lease: acquired, renewed, taken over once expired, released. */
function leaseEvents(): TurnLeaseEvent[] {
  const a = { pid: 101, host: "host-a", token: "tok-a" };
  const b = { pid: 202, host: "host-b", token: "tok-b" };
  const out: TurnLeaseEvent[] = [];
  let lease: TurnLease | null = null;
  const step = (es: TurnLeaseEvent[]) => {
    out.push(...es);
    lease = es.reduce(evolveTurnLease, lease);
  };
  step(
    decideTurnLease(
      "goal_csv",
      { type: "acquire", holder: AGENT, owner: a, now: new Date(T0), ttlMs: 60_000, ownerGone: false },
      lease,
    ),
  );
  step(
    decideTurnLease(
      "goal_csv",
      { type: "heartbeat", token: "tok-a", now: new Date(T1), ttlMs: 60_000 },
      lease,
    ),
  );
  step(
    decideTurnLease(
      "goal_csv",
      { type: "acquire", holder: AGENT, owner: b, now: new Date(EXP), ttlMs: 60_000, ownerGone: false },
      lease,
    ),
  );
  step(decideTurnLease("goal_csv", { type: "release", token: "tok-b", reason: "turn done" }, lease));
  return out;
}

/**
 * The facts loopgate derives itself (receipts, revisions, spend, monitor polls, the turn and its lease):
 * recorded as `runtime` even when a person's command led to them, never as the person's word. Written
 * out from docs/architecture.md ("Layers of trust"), not read from the declarations.
 */
const DERIVED = new Set<string>([
  "goal_revision_recorded",
  "todo_completed",
  "acceptance_receipt_recorded",
  "quota_spent",
  "monitor_baseline_recorded",
  "monitor_no_change_recorded",
  "monitor_observation_recorded",
  "monitor_successor_created",
  "monitor_poll_failed",
]);

/** Every goal-stream event the deciders emit over the scripts above, with who appends it. */
function emitted(): { body: GoalEventBody; issuer: Issuer }[] {
  const goal = [goalScript, ...replanScripts].flatMap((script) => {
    const batches = drive<GoalState, GoalCommand, GoalEventBody>(
      goalDecider,
      script.map(([, c]) => c),
    );
    return batches.flatMap((batch, i) => batch.map((body) => ({ body, issuer: script[i]?.[0] as Issuer })));
  });
  const turn = turnScripts.flatMap((s) => drive<TurnState, TurnCommand, TurnEvent>(turnDecider, s).flat());
  return [
    ...goal,
    // Turn facts and the lease are loopgate's own.
    ...[...turn, ...leaseEvents(), ...notificationFacts()].map((body) => ({
      body: body as GoalEventBody,
      issuer: "runtime" as const,
    })),
  ];
}

/**
 * The notification facts as the deliverer (runner/goal/notify/notify-deliver.ts) writes them: the due data
 * from the pure rule, then one claimed attempt that failed and one that was sent. loopgate's own facts.
 */
function notificationFacts(): GoalEventBody[] {
  const target = {
    id: "hook",
    kind: "webhook" as const,
    url: "https://x.test/h",
    on: ["terminal" as const],
    retry: DEFAULT_NOTIFY_RETRY,
    timeout_seconds: 10,
  };
  const s = foldNotify([
    { type: "goal_created", revision: 0, data: { goal_id: "goal_csv", notify: [target] } },
    { type: "goal_no_followup_declared", revision: 1, data: {} },
  ]);
  const due = dueNotifications(
    s,
    occurrences(s, {
      runtimeState: "waiting",
      runtimeReason: "",
      gates: [],
      terminal: true,
      closureOutcome: "achieved",
      cli: (a) => `loopgate ${a}`,
    }),
  );
  const id = due[0]?.notification_id ?? "missing";
  return [
    ...due.map((d) => ({ type: "notification_due" as const, data: d })),
    { type: "notification_attempted", data: { notification_id: id, attempt: 1, by: "host:1", until: T1 } },
    {
      type: "notification_failed",
      data: { notification_id: id, attempt: 1, error: "HTTP 500", max_attempts: 5, next_retry_at: T1 },
    },
    { type: "notification_sent", data: { notification_id: id, attempt: 2, detail: "HTTP 200" } },
  ];
}

/** The origin a fact must carry: its issuer's, except that what loopgate derives is always `runtime`. */
const expectedOrigin = (type: string, issuer: Issuer): Origin => (DERIVED.has(type) ? "runtime" : issuer);

const stored = (body: GoalEventBody, origin: Origin) => ({
  id: "e1",
  type: body.type,
  data: body.data,
  meta: { at: T0, origin },
});

let memo: ReturnType<typeof emitted> | undefined;
const decided = () => {
  memo ??= emitted();
  return memo;
};

describe("every goal event a decider emits is declared in the goal area, as it is written", () => {
  it("each is of a declared goal type, appended with the origin its issuer gives it, which its declaration allows", () => {
    for (const { body, issuer } of decided()) {
      const want = expectedOrigin(body.type, issuer);
      expect(isGoalEventType(body.type), body.type).toBe(true);
      expect(goalEventOrigin(body.type, issuer === "operator"), `${body.type} by ${issuer}`).toBe(want);
      expect(originOf(body.type) as readonly Origin[], body.type).toContain(want);
      expect(stampOrigin(body.type, want), body.type).toBe(want);
    }
  });

  it("the turn's facts and its lease are loopgate's alone: declared with the runtime origin only", () => {
    for (const t of goalEventTypes.filter((t) => t.startsWith("turn_")))
      expect(originOf(t) as readonly Origin[], t).toEqual(["runtime"]);
  });

  it("each survives the log unchanged: JSON, then the schema, gives back what was decided", () => {
    for (const { body, issuer } of decided()) {
      const event = stored(body, expectedOrigin(body.type, issuer));
      const read = LoopgateEvent.safeParse(JSON.parse(JSON.stringify(event)));
      expect(read.success, `${body.type}: ${read.error?.message}`).toBe(true);
      expect(read.data, body.type).toEqual(event);
    }
  });

  it("every declared goal type is reached by some decider (none unchecked, none declared for nothing)", () => {
    const seen = new Set(decided().map((e) => e.body.type));
    expect(goalEventTypes.filter((t) => !seen.has(t))).toEqual([]);
  });

  it("a field the schema does not declare is dropped on read: the round trip above would catch it", () => {
    // The check the round trip relies on: zod objects strip unknown keys, so a decided field that is not
    // declared comes back missing and `toEqual` fails.
    const body = { type: "todo_claimed", data: { todo_id: "todo_aaa", agent_id: AGENT, extra: 1 } };
    const read = LoopgateEvent.parse(stored(body as unknown as GoalEventBody, "operator"));
    expect(read.data).toEqual({ todo_id: "todo_aaa", agent_id: AGENT });
  });
});

describe("the goal stream's types are the declared ones, inferred", () => {
  it("a goal event body is exactly an event body of a goal type; turn and lease facts are among them", () => {
    expectTypeOf<GoalEventBody>().toEqualTypeOf<Extract<EventBody, { type: GoalEventType }>>();
    expectTypeOf<TurnEvent>().toMatchTypeOf<GoalEventBody>();
    expectTypeOf<TurnLeaseEvent>().toMatchTypeOf<GoalEventBody>();
  });
});
