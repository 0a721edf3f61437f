import { describe, expect, it } from "vitest";
import { wakeOfHint } from "../../../../src/runner/goal/turn/scheduler-phases.js";

// The wake-up a turn reports is its recorded hint: a turn whose settlement closed the goal keeps saying so
// after the hint went through the log (it used to come back as a plain stop, read as "stopped").

describe("wakeOfHint", () => {
  it("keeps terminal from the recorded hint", () => {
    expect(
      wakeOfHint({ action: "stop", not_before: null, why: "terminal closure holds", terminal: true }),
    ).toEqual({
      action: "stop",
      at: null,
      why: "terminal closure holds",
      terminal: true,
    });
  });

  it("a stop without it (a paused goal, or a log written before it was recorded) is not terminal", () => {
    const w = wakeOfHint({ action: "stop", not_before: null, why: "the goal is stopped" });
    expect(w).toEqual({ action: "stop", at: null, why: "the goal is stopped" });
    expect("terminal" in w).toBe(false);
  });
});
