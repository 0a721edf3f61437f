import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { aborted, stepsPerTurnIs, tokensAtLeast } from "../../../src/core/agent/agent-budget.js";
import {
  type AgentConfig,
  type AgentState,
  evolveAgent,
  initialAgentState,
} from "../../../src/core/agent/agent-decider.js";
import { type AgentLimits, nextAgentAction } from "../../../src/core/agent/agent-next.js";
import type { EventData, LoopgateEvent, RunStreamEvent } from "../../../src/core/events/loopgate-event.js";
import { fold } from "../../support/decider.js";
import {
  attempt,
  attemptDone,
  config,
  ev,
  evaluated,
  finished,
  item,
  repairDecided,
  responded,
  started,
  written,
} from "./agent-events.js";

// nextAgentAction given/when/then: given the run's events, when the agent asks what to do next, then
// this action (written out by hand). One block per rule of nextAgentAction, in its order.

const decider = (c: AgentConfig) => ({ initialState: () => initialAgentState(c), evolve: evolveAgent });
const state = (events: readonly LoopgateEvent[], c: AgentConfig = config()): AgentState =>
  fold(decider(c), events);
const none: AgentLimits = { stopWhen: [] };
const next = (events: readonly LoopgateEvent[], c: AgentConfig = config(), limits = none, now = 0) =>
  nextAgentAction(state(events, c), limits, now);

const gateGoal = config({ goal: { predicates: [{ gate_passed: "unit" }], maxTurns: 3 } });
const commandGoal = config({ goal: { predicates: [{ command_succeeded: "npm test" }], maxTurns: 3 } });
const goalSet = (predicates: EventData<"goal_set">["predicates"]) =>
  ev("goal_set", { attempt: 1, condition: null, predicates, max_turns: 3 }, "operator");

describe("nextAgentAction", () => {
  it("an interrupt stops before anything else, even with calls pending", () => {
    const signal = { aborted: true };
    expect(
      next([attempt(), responded([{ id: "c1", name: "bash" }])], config(), { stopWhen: [aborted(signal)] }),
    ).toEqual({ kind: "stop", outcome: { kind: "interrupted" } });
  });
  it("a recorded cap stops the attempt", () => {
    const capped = ev("budget_exhausted", { attempt: 1, cap: "tokens", limit: 10, used: 15 });
    expect(next([attempt(), responded(), capped])).toEqual({ kind: "stop", outcome: { kind: "capped" } });
  });
  it("a model failure that is not retried stops with the model, the kind, the message and why", () => {
    const failed = (retryable: boolean, retry: number) =>
      ev("model_failed", {
        attempt: 1,
        turn: 1,
        step: 1,
        kind: retryable ? "rate_limit" : "auth",
        message: "no",
        retryable,
        retry,
        backoff_ms: null,
      });
    expect(next([attempt(), failed(false, 0)])).toEqual({
      kind: "stop",
      outcome: { kind: "model_failed", reason: "model scripted:test failed: auth: no (not retryable)" },
    });
    expect(next([attempt(), failed(true, 3)])).toEqual({
      kind: "stop",
      outcome: { kind: "model_failed", reason: "model scripted:test failed: rate_limit: no after 3 retries" },
    });
  });
  it("a retried model failure asks the model again, counting the retry", () => {
    const failed = ev("model_failed", {
      attempt: 1,
      turn: 1,
      step: 1,
      kind: "rate_limit",
      message: "slow down",
      retryable: true,
      retry: 0,
      backoff_ms: 500,
    });
    expect(next([attempt(), failed])).toEqual({ kind: "call_model", turn: 1, step: 1, retry: 1 });
    // A response resets the count.
    expect(
      next([
        attempt(),
        failed,
        responded([{ id: "c1", name: "bash" }]),
        started("c1", "bash", true),
        finished("c1", "bash"),
      ]),
    ).toEqual({ kind: "call_model", turn: 1, step: 2, retry: 0 });
  });
  it("with a goal, the goal is set first", () => {
    expect(next([attempt()], gateGoal)).toEqual({ kind: "set_goal" });
    expect(next([attempt(), goalSet([{ gate_passed: "unit" }])], gateGoal)).toEqual({
      kind: "call_model",
      turn: 1,
      step: 1,
      retry: 0,
    });
  });
  it("pending calls run one at a time, in order; a read-only call left in doubt is repeated under its intent", () => {
    const r = responded([
      { id: "c1", name: "read_file", args: { path: "a" } },
      { id: "c2", name: "bash", args: { command: "ls" } },
    ]);
    expect(next([attempt(), r])).toEqual({
      kind: "run_tool",
      call: { id: "c1", name: "read_file", args: { path: "a" } },
      intentRecorded: false,
      mutating: null,
    });
    expect(next([attempt(), r, started("c1", "read_file", false)])).toEqual({
      kind: "run_tool",
      call: { id: "c1", name: "read_file", args: { path: "a" } },
      intentRecorded: true,
      mutating: false,
    });
    expect(next([attempt(), r, started("c1", "read_file", false), finished("c1", "read_file")])).toEqual({
      kind: "run_tool",
      call: { id: "c2", name: "bash", args: { command: "ls" } },
      intentRecorded: false,
      mutating: null,
    });
  });
  it("a fact-producing call whose facts a crash cut off is replayed, and only then", () => {
    const call = { id: "c1", name: "todo", args: { items: [] } };
    const base = [attempt(), responded([call]), started("c1", "todo", false), finished("c1", "todo")];
    const resumed = ev("run_resumed", { from_revision: 4, in_doubt: [], action: "continued from the log" });
    expect(next([...base, resumed])).toEqual({ kind: "replay_tool_facts", call });
    expect(next([...base, written("c1", []), resumed])).toEqual({
      kind: "call_model",
      turn: 1,
      step: 2,
      retry: 0,
    });
    // A failed call has no facts to replay.
    const failed = [
      attempt(),
      responded([call]),
      started("c1", "todo", false),
      finished("c1", "todo", { is_error: true }),
    ];
    expect(next([...failed, resumed])).toEqual({ kind: "call_model", turn: 1, step: 2, retry: 0 });
  });
  describe("after the batch, completed steps are checked, then appraised", () => {
    const batch = (check: string | null) => [
      attempt(),
      responded([{ id: "t1", name: "todo" }]),
      started("t1", "todo", false),
      finished("t1", "todo"),
      written("t1", [item("fix it", "completed", check)], ["fix it"]),
    ];
    it("a declared check runs, with an id numbered by the run's checks", () => {
      expect(next(batch("npm test"))).toEqual({
        kind: "run_step_check",
        callId: "t1",
        step: "fix it",
        command: "npm test",
        checkId: "t1:check:1",
        skipped: null,
      });
    });
    it("it is skipped, with the reason, when checks are off or the run's limit is reached", () => {
      expect(next(batch("npm test"), config({ stepChecks: { enabled: false, max: 16 } }))).toMatchObject({
        kind: "run_step_check",
        skipped: "step checks are disabled for this run",
      });
      expect(next(batch("npm test"), config({ stepChecks: { enabled: true, max: 0 } }))).toMatchObject({
        kind: "run_step_check",
        skipped: "the limit of 0 step checks per run is reached",
      });
    });
    it("a step without a check, or whose check ran, is appraised (at its write's index in the run's log)", () => {
      expect(next(batch(null))).toEqual({
        kind: "appraise_step",
        callId: "t1",
        step: "fix it",
        at: 4,
        check: null,
      });
      const ran = {
        attempt: 1,
        call_id: "t1",
        step: "fix it",
        command: "npm test",
        status: "passed" as const,
        exit_code: 0,
        detail: "ok",
        duration_ms: 3,
      };
      expect(next([...batch("npm test"), ev("step_check_ran", ran)])).toEqual({
        kind: "appraise_step",
        callId: "t1",
        step: "fix it",
        at: 4,
        check: ran,
      });
    });
    it("an appraised step is done with", () => {
      const appraised = ev("step_appraised", {
        attempt: 1,
        call_id: "t1",
        step: "fix it",
        finding: "null_step",
        measured: true,
        calls: 0,
        check: null,
        rendered: "",
      });
      expect(next([...batch(null), appraised])).toEqual({ kind: "call_model", turn: 1, step: 2, retry: 0 });
    });
  });
  describe("when the model stops calling tools", () => {
    it("without a goal or self-check, the attempt stops with the model's last text", () => {
      expect(next([attempt(), responded([], { text: "All done." })])).toEqual({
        kind: "stop",
        outcome: { kind: "stopped", text: "All done." },
      });
    });
    it("in heavy mode the repair gate is decided, a repair turn is queued, and an allow stops", () => {
      const heavy = config({ selfCheck: true });
      const stop = [attempt(), responded([], { text: "Done." })];
      expect(next(stop, heavy)).toEqual({ kind: "decide_repair", turn: 1, turnsLeft: true });
      expect(next([...stop, repairDecided("allow")], heavy)).toEqual({
        kind: "stop",
        outcome: { kind: "stopped", text: "Done." },
      });
      const repair = next([...stop, repairDecided("repair")], heavy);
      expect(repair).toEqual({
        kind: "queue_continuation",
        turn: 1,
        text: expect.stringContaining(
          "loopgate's self-check gate found 1 blocker(s); this is repair turn 1 of 1.\n" +
            "It is advisory: only loopgate's own gates decide success.\n- missing_self_check",
        ),
      });
      const queued = ev("continuation_queued", { attempt: 1, turn: 1, text: "repair" }, "continuation");
      expect(next([...stop, repairDecided("repair"), queued], heavy)).toEqual({
        kind: "call_model",
        turn: 2,
        step: 1,
        retry: 0,
      });
    });
    it("with a goal, each gate or file predicate is probed, then the goal evaluated over the events after goal_set", () => {
      const base = [attempt(), goalSet([{ gate_passed: "unit" }]), responded()];
      expect(next(base, gateGoal)).toEqual({
        kind: "probe_goal",
        turn: 1,
        predicate: { gate_passed: "unit" },
      });
      const probed = ev(
        "goal_probed",
        { attempt: 1, turn: 1, predicate: { gate_passed: "unit" }, holds: false, detail: "" },
        "gate",
      );
      expect(next([...base, probed], gateGoal)).toEqual({
        kind: "evaluate_goal",
        turn: 1,
        maxTurns: 3,
        windowStart: 1,
      });
    });
    it("a command predicate is never probed: it is judged from the recorded calls", () => {
      const base = [attempt(), goalSet([{ command_succeeded: "npm test" }]), responded()];
      expect(next(base, commandGoal)).toEqual({
        kind: "evaluate_goal",
        turn: 1,
        maxTurns: 3,
        windowStart: 1,
      });
    });
    it("an unmet goal queues the continuation prompt naming what is unmet", () => {
      const base = [attempt(), goalSet([{ command_succeeded: "npm test" }]), responded()];
      expect(next([...base, evaluated("continuing", ["command_succeeded: npm test"])], commandGoal)).toEqual({
        kind: "queue_continuation",
        turn: 1,
        text:
          "[loopgate] The goal is not met yet. Still unmet, on loopgate's own evidence:\n" +
          "- command_succeeded: npm test\n" +
          "Keep working. A command counts only when you run exactly that command with the bash tool and it exits 0 after your last change.\n" +
          "This reminder is not evidence of completion.",
      });
    });
    it("a completed goal stops (after the repair gate in heavy mode)", () => {
      const base = [
        attempt(),
        goalSet([{ command_succeeded: "npm test" }]),
        responded([], { text: "ok" }),
        evaluated("completed"),
      ];
      expect(next(base, commandGoal)).toEqual({ kind: "stop", outcome: { kind: "stopped", text: "ok" } });
      const heavy = config({ ...commandGoal, selfCheck: true });
      expect(next(base, heavy)).toEqual({ kind: "decide_repair", turn: 1, turnsLeft: true });
    });
    it("a blocked goal stops; in heavy mode the gate is decided first, knowing no turn is left", () => {
      const base = [
        attempt(),
        goalSet([{ command_succeeded: "npm test" }]),
        responded([], { text: "ok" }),
        evaluated("blocked"),
      ];
      expect(next(base, commandGoal)).toEqual({ kind: "stop", outcome: { kind: "stopped", text: "ok" } });
      const heavy = config({ ...commandGoal, selfCheck: true });
      expect(next(base, heavy)).toEqual({ kind: "decide_repair", turn: 1, turnsLeft: false });
      expect(next([...base, repairDecided("cap_reached")], heavy)).toEqual({
        kind: "stop",
        outcome: { kind: "stopped", text: "ok" },
      });
    });
  });
  it("before a model request, the first stop rule that applies is recorded as the cap", () => {
    const batch = [
      attempt(),
      responded([{ id: "c1", name: "bash" }]),
      started("c1", "bash", true),
      finished("c1", "bash"),
    ];
    expect(next(batch, config(), { stopWhen: [stepsPerTurnIs(1), tokensAtLeast(1)] })).toEqual({
      kind: "record_cap",
      cap: { cap: "steps_per_turn", limit: 1, used: 1 },
    });
    expect(next(batch, config(), { stopWhen: [stepsPerTurnIs(5), tokensAtLeast(15)] })).toEqual({
      kind: "record_cap",
      cap: { cap: "tokens", limit: 15, used: 15 },
    });
  });
  it("otherwise the model is asked, for the next step of the turn", () => {
    expect(next([attempt()])).toEqual({ kind: "call_model", turn: 1, step: 1, retry: 0 });
  });
});

describe("evolveAgent", () => {
  it("counts steps within a turn and starts a new turn on a continuation", () => {
    const s = state([
      attempt(),
      responded([{ id: "c1", name: "bash" }]),
      started("c1", "bash", true),
      finished("c1", "bash"),
      responded(),
      ev("continuation_queued", { attempt: 1, turn: 1, text: "go on" }, "continuation"),
    ]);
    expect({ turn: s.turn, stepsInTurn: s.stepsInTurn, pending: s.pending, inDoubt: s.inDoubt }).toEqual({
      turn: 2,
      stepsInTurn: 0,
      pending: [],
      inDoubt: [],
    });
  });
  it("keeps a started call without a result in doubt, with its recorded mutating flag", () => {
    const s = state([attempt(), responded([{ id: "c1", name: "mystery" }]), started("c1", "mystery", false)]);
    expect(s.inDoubt).toEqual([{ callId: "c1", name: "mystery", mutating: false }]);
  });
  it("sums usage over every attempt, but positions only inside its own", () => {
    const c2 = config({ attempt: 2 });
    const s = state([attempt(1), responded([{ id: "c1", name: "bash" }]), attemptDone(1), attempt(2)], c2);
    expect(s.usage).toEqual({ responses: 1, tokens: 15, costUsd: 0.01 });
    expect({ stepsInTurn: s.stepsInTurn, pending: s.pending }).toEqual({ stepsInTurn: 0, pending: [] });
  });
  it("property: events of other attempts never move this attempt's position", () => {
    const other = fc.constantFrom<LoopgateEvent>(
      responded([{ id: "x", name: "bash" }]),
      started("x", "bash", true),
      finished("x", "bash"),
      evaluated("continuing"),
      ev("budget_exhausted", { attempt: 1, cap: "tokens", limit: 1, used: 2 }),
      ev("continuation_queued", { attempt: 1, turn: 1, text: "t" }, "continuation"),
    );
    fc.assert(
      fc.property(fc.array(other, { maxLength: 12 }), (noise) => {
        const s = state([attempt(1), ...noise, attemptDone(1), attempt(2)], config({ attempt: 2 }));
        const fresh = state([attempt(1), attemptDone(1), attempt(2)], config({ attempt: 2 }));
        const position = (x: AgentState) => [
          x.turn,
          x.stepsInTurn,
          x.pending,
          x.inDoubt,
          x.capped,
          x.evaluated,
        ];
        expect(position(s)).toEqual(position(fresh));
      }),
    );
  });
  it("accepts every event type (the switch is exhaustive)", () => {
    const s = initialAgentState(config());
    for (const e of [
      attempt(),
      ev("run_lease_renewed", { owner: "o", expires_at: "2026-01-01T00:00:00.000Z" } as never),
    ])
      expect(() => evolveAgent(s, e as RunStreamEvent)).not.toThrow();
    expect(() =>
      evolveAgent(s, { ...attempt(), type: "no_such_event" } as unknown as RunStreamEvent),
    ).toThrow(/unhandled event "no_such_event"/);
  });
});
