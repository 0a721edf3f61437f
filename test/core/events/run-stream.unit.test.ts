// One union per stream kind: a run's fold takes a run stream's events, and an event that only another kind
// of stream holds is refused as corruption, never skipped.
import { describe, expect, it } from "vitest";
import {
  isRunStreamEvent,
  isStreamEvent,
  runStreamOf,
  type StreamKind,
  streamOf,
} from "../../../src/core/events/loopgate-event.js";
import { CorruptEventError } from "../../../src/core/kernel/errors.js";
import { foldRun } from "../../../src/core/run/run-state.js";

const meta = { at: "2026-12-04T00:00:00.000Z", origin: "runtime" as const };
// Types named from the event reference (docs/reference/events.md), not from the code under test.
const runTypes = [
  "run_started",
  "attempt_started",
  "gate_run_finished",
  "model_responded",
  "judge_finished",
  "agent_tool_observed",
  "todo_written",
  "self_check_recorded",
];
const otherTypes = [
  "goal_created",
  "todo_added",
  "turn_bound",
  "turn_lease_heartbeat",
  "hook_session_bound",
  "hook_stop_verified",
  "task_checked",
];

describe("the run stream's events", () => {
  it("a run's own types belong in its stream; a goal's, a task check's and a hook session's do not", () => {
    for (const type of runTypes) expect(isRunStreamEvent({ type }), type).toBe(true);
    for (const type of otherTypes) expect(isRunStreamEvent({ type }), type).toBe(false);
  });

  it("an event of another stream kind in a run's stream is corruption, named with its place", () => {
    const events = [
      { id: "a", type: "attempt_started", data: {}, meta },
      { id: "b", type: "goal_created", data: {}, meta },
    ];
    expect(() => runStreamOf(events)).toThrow(CorruptEventError);
    expect(() => runStreamOf(events)).toThrow(/event 1 of a run stream is a "goal_created"/);
    expect(() => foldRun(events as never)).toThrow(CorruptEventError);
  });

  it("an empty stream and a run's own events pass through unchanged", () => {
    expect(runStreamOf([])).toEqual([]);
    const events = [{ id: "a", type: "attempt_started", data: {}, meta }];
    expect(runStreamOf(events)).toBe(events);
  });
});

describe("every kind of stream has its own union", () => {
  // By kind, from the event reference: what each kind of stream holds.
  const holds: Record<StreamKind, string[]> = {
    run: [...runTypes, "hook_failed"],
    goal: ["goal_created", "todo_added", "turn_bound", "turn_lease_heartbeat"],
    "task-check": ["task_checked"],
    "hook-session": ["hook_session_bound", "hook_stop_verified", "agent_tool_observed", "hook_failed"],
  };
  const kinds = Object.keys(holds) as StreamKind[];

  it("a kind's types belong in its streams; the types only another kind holds do not", () => {
    for (const kind of kinds)
      for (const other of kinds)
        for (const type of holds[other]) {
          const shared = holds[kind].includes(type);
          expect(isStreamEvent(kind, { type }), `${type} in a ${kind} stream`).toBe(other === kind || shared);
        }
  });

  it("a goal's event in a hook session's stream is corruption, named with its place", () => {
    const events = [
      { id: "a", type: "agent_tool_observed", data: {}, meta },
      { id: "b", type: "hook_stop_verified", data: {}, meta },
      { id: "c", type: "todo_added", data: {}, meta },
    ];
    expect(() => streamOf("hook-session", events)).toThrow(
      /event 2 of a hook-session stream is a "todo_added"/,
    );
    expect(streamOf("hook-session", events.slice(0, 2))).toHaveLength(2);
    expect(() => streamOf("task-check", events)).toThrow(CorruptEventError);
  });
});
