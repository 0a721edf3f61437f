import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  agentEventTypes,
  eventAreas,
  eventTypes,
  isTrusted,
  LoopgateEvent,
  Origin,
  originOf,
  stampOrigin,
} from "../../../src/core/events/loopgate-event.js";

// The event types as they were spelled before they were declared by area: none may be lost.
const BEFORE = {
  run: [
    "run_started",
    "workspace_observed",
    "attempt_started",
    "builder_finished",
    "workspace_changed",
    "finding_recorded",
    "claim_recorded",
    "gate_run_finished",
    "attempt_finished",
    "required_fix_issued",
    "infrastructure_failed",
    "run_finished",
    "run_resumed",
    "run_lease_taken",
    "run_lease_renewed",
    "task_checked",
  ],
  agent: [
    "goal_set",
    "model_responded",
    "model_failed",
    "tool_call_started",
    "tool_call_finished",
    "tool_call_abandoned",
    "workspace_touched",
    "goal_probed",
    "goal_evaluated",
    "continuation_queued",
    "budget_exhausted",
  ],
  "self-check": ["self_check_plan_recorded", "self_check_recorded", "repair_decided"],
  todo: ["todo_written", "step_check_ran", "step_appraised", "step_escalated"],
  judge: ["judge_finished"],
  "agent-runtime": [
    "agent_tool_observed",
    "agent_session_finished",
    "hook_failed",
    "stop_hook_answered",
    "agent_step_appraised",
    "agent_goal_evaluated",
  ],
  "hook-session": ["hook_session_bound", "hook_stop_verified"],
  goal: [
    "goal_created",
    "goal_activation_changed",
    "goal_revision_recorded",
    "goal_acceptance_changed",
    "goal_budget_changed",
    "goal_no_followup_declared",
    "todo_added",
    "todo_attested",
    "todo_claimed",
    "todo_claim_released",
    "todo_blocked",
    "todo_deferred",
    "todo_reopened",
    "todo_superseded",
    "todo_closed_no_followup",
    "todo_completed",
    "acceptance_receipt_recorded",
    "gate_decided",
    "vision_recorded",
    "vision_retired",
    "vision_patched",
    "vision_unchanged_recorded",
    // monitors (core/events/goal/monitor-events.ts) and replan (core/events/goal/replan-events.ts)
    "monitor_baseline_recorded",
    "monitor_no_change_recorded",
    "monitor_observation_recorded",
    "monitor_successor_created",
    "monitor_poll_failed",
    "monitor_completed",
    "replan_noop_recorded",
    "replan_answered",
    "vision_closed",
    "change_compensated",
    "quota_spent",
    // governed turns and their lease (core/events/goal/turn-events.ts)
    "turn_bound",
    "turn_effect_prepared",
    "turn_effect_readback",
    "turn_host_executed",
    "turn_typed_result",
    "turn_validated",
    "turn_writeback_accepted",
    "turn_quota_spent",
    "turn_scheduler_applied",
    "turn_scheduler_acked",
    "turn_scheduler_apply_failed",
    "turn_rebased",
    "turn_released",
    "turn_failed",
    "turn_lease_acquired",
    "turn_lease_heartbeat",
    "turn_lease_released",
    // notifications (core/events/goal/notify-events.ts)
    "notification_due",
    "notification_attempted",
    "notification_sent",
    "notification_failed",
  ],
} as const;

const areaNames = Object.keys(eventAreas) as (keyof typeof eventAreas)[];

describe("every event type is declared exactly once", () => {
  for (const area of areaNames) {
    it(`area ${area}: each of its types is declared in no other area, and none was lost`, () => {
      const own = Object.keys(eventAreas[area]);
      for (const type of own) {
        const declaredIn = areaNames.filter((a) => Object.hasOwn(eventAreas[a], type));
        expect(declaredIn, type).toEqual([area]);
      }
      expect(own.sort()).toEqual([...BEFORE[area]].sort());
    });
  }

  it("the type list and the union hold each declared type once", () => {
    const declared = areaNames.flatMap((a) => Object.keys(eventAreas[a]));
    expect(new Set(eventTypes).size).toBe(eventTypes.length);
    expect([...eventTypes].sort()).toEqual(declared.sort());
    expect(LoopgateEvent.options.map((o) => o.shape.type.value).sort()).toEqual(declared.sort());
  });

  it("the agent's event types are those of the agent, self-check and todo areas", () => {
    expect([...agentEventTypes].sort()).toEqual(
      [...BEFORE.agent, ...BEFORE["self-check"], ...BEFORE.todo].sort(),
    );
  });

  it("every declaration names at least one origin, each a known one", () => {
    for (const type of eventTypes) {
      expect(originOf(type).length, type).toBeGreaterThan(0);
      for (const o of originOf(type)) expect(Origin.options, type).toContain(o);
    }
  });
});

describe("origins: one rule", () => {
  it("runtime, gate, judge and operator are trusted; model and continuation are not (docs/architecture.md)", () => {
    expect(Origin.options.filter(isTrusted).sort()).toEqual(["gate", "judge", "operator", "runtime"]);
    expect(isTrusted("model")).toBe(false);
    expect(isTrusted("continuation")).toBe(false);
  });

  it("the types whose origin is fixed by what they are", () => {
    expect(originOf("gate_run_finished")).toEqual(["gate"]);
    expect(originOf("judge_finished")).toEqual(["judge"]);
    expect(originOf("claim_recorded")).toEqual(["model"]);
    expect(originOf("model_responded")).toEqual(["model"]);
    expect(originOf("continuation_queued")).toEqual(["continuation"]);
    expect(originOf("goal_set")).toEqual(["operator"]);
  });

  it("a caller cannot stamp a model reply trusted, nor a gate result with the model's origin", () => {
    expect(stampOrigin("model_responded", "runtime")).toBe("model");
    expect(stampOrigin("claim_recorded", "operator")).toBe("model");
    expect(stampOrigin("continuation_queued", "runtime")).toBe("continuation");
    expect(stampOrigin("gate_run_finished", "model")).toBe("gate");
    expect(stampOrigin("judge_finished", "runtime")).toBe("judge");
    expect(stampOrigin("tool_call_finished", "model")).toBe("runtime");
  });

  it("a type that allows several origins keeps the caller's when it is one of them", () => {
    expect(stampOrigin("goal_probed", "gate")).toBe("gate");
    expect(stampOrigin("goal_probed", "runtime")).toBe("runtime");
    expect(stampOrigin("goal_probed", "model")).toBe("runtime");
  });

  it("whatever the caller asks, the stamped origin is one the type declares", () => {
    fc.assert(
      fc.property(fc.constantFrom(...eventTypes), fc.constantFrom(...Origin.options), (type, requested) => {
        const stamped = stampOrigin(type, requested);
        expect(originOf(type)).toContain(stamped);
        if ((originOf(type) as readonly string[]).includes(requested)) expect(stamped).toBe(requested);
      }),
    );
  });
});

describe("schemas as tight as the domain types", () => {
  const meta = { at: "2026-01-01T00:00:00.000Z", origin: "operator" } as const;
  const goalSet = (predicates: unknown[]) => ({
    id: "e1",
    type: "goal_set",
    data: { attempt: 1, condition: null, predicates, max_turns: 3 },
    meta,
  });
  const modelFailed = (kind: string) => ({
    id: "e2",
    type: "model_failed",
    data: {
      attempt: 1,
      turn: 1,
      step: 1,
      kind,
      message: "m",
      retryable: false,
      retry: 0,
      backoff_ms: null,
    },
    meta: { ...meta, origin: "runtime" },
  });
  const probed = (predicate: unknown) => ({
    id: "e3",
    type: "goal_probed",
    data: { attempt: 1, turn: 1, predicate, holds: true, detail: "" },
    meta: { ...meta, origin: "runtime" },
  });

  it("goal predicates are the task's predicates, not any string record", () => {
    expect(LoopgateEvent.safeParse(goalSet([{ command_succeeded: "node --test" }])).success).toBe(true);
    expect(
      LoopgateEvent.safeParse(goalSet([{ gate_passed: "unit" }, { file_exists: "a.txt" }])).success,
    ).toBe(true);
    expect(LoopgateEvent.safeParse(goalSet([{ model_says: "done" }])).success).toBe(false);
    expect(LoopgateEvent.safeParse(goalSet([{ command_succeeded: "x", gate_passed: "unit" }])).success).toBe(
      false,
    );
    expect(LoopgateEvent.safeParse(goalSet([{ command_succeeded: "" }])).success).toBe(false);
    expect(LoopgateEvent.safeParse(probed({ gate_passed: "unit" })).success).toBe(true);
    expect(LoopgateEvent.safeParse(probed({ anything: "x" })).success).toBe(false);
  });

  it("model_failed.kind is one of the model failure kinds", () => {
    for (const kind of ["rate_limit", "provider", "auth", "script_exhausted"])
      expect(LoopgateEvent.safeParse(modelFailed(kind)).success, kind).toBe(true);
    const bad = LoopgateEvent.safeParse(modelFailed("gremlins"));
    expect(bad.success).toBe(false);
    expect(JSON.stringify(bad.error?.issues)).toContain("kind");
  });
});
