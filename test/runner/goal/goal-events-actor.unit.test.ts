// The goal writer stamps meta.by on a person's events only: a runtime fact decided in the same append
// (the same command can emit both) never carries the person's name.
import { describe, expect, it } from "vitest";
import { LoopgateEvent } from "../../../src/core/events/loopgate-event.js";
import { goalEvents, writerOf } from "../../../src/runner/goal/goal-store.js";

const clock = () => new Date("2026-12-04T00:00:00.000Z");
const bodies = [
  { type: "gate_decided", data: { todo_id: "todo_publish_gate", decision: "approved", note: "" } },
  {
    type: "goal_revision_recorded",
    data: { revision: "a".repeat(40), previous: "b".repeat(40), reason: "r" },
  },
];
// The origin rule of the test, not the code's: the gate is the person's, the revision loopgate's.
const origin = (t: string) => (t === "gate_decided" ? "operator" : "runtime") as "operator" | "runtime";

describe("goalEvents' actor", () => {
  it("puts by on the operator-origin events and not on the runtime ones; every event is valid", () => {
    const [gate, revision] = goalEvents(bodies, origin, clock, "ana");
    expect(gate?.meta).toEqual({ at: "2026-12-04T00:00:00.000Z", origin: "operator", by: "ana" });
    expect(revision?.meta).toEqual({ at: "2026-12-04T00:00:00.000Z", origin: "runtime" });
    for (const e of [gate, revision]) expect(LoopgateEvent.safeParse(e).success).toBe(true);
  });

  it("without a name, no by at all (unknown), not an empty one", () => {
    const [gate] = goalEvents(bodies, origin, clock);
    expect(gate?.meta).not.toHaveProperty("by");
  });

  it("a writer is a person (true, or named) or loopgate (false)", () => {
    expect(writerOf(true)).toEqual({ byOperator: true, by: undefined });
    expect(writerOf({ by: "ana" })).toEqual({ byOperator: true, by: "ana" });
    expect(writerOf({ by: undefined })).toEqual({ byOperator: true, by: undefined });
    expect(writerOf(false)).toEqual({ byOperator: false, by: undefined });
  });
});
