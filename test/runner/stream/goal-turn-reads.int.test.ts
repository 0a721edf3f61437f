import { describe, expect, it } from "vitest";
import { BEFORE, measureGoalTurn } from "../../../bench/goal-turn-bench.js";

// One todo turn of the bundled csvcol goal (real SQLite, real git, the oracle in bubblewrap), counted as
// `npm run bench -- goal` counts it. The counts are deterministic, so the bounds are exact targets, not
// timings: the goal stream is read at most 3 times and the turn's run once.

describe("one todo turn reads its data once", () => {
  it("reads the goal stream ≤ 3 times, the run stream once, and starts fewer git processes than before", async () => {
    const counts = await measureGoalTurn();
    expect(counts.outcome).toBe("advanced");
    expect(counts.goalReads).toBeGreaterThanOrEqual(1);
    expect(counts.goalReads).toBeLessThanOrEqual(3);
    expect(counts.runReads).toBe(1);
    expect(counts.gitProcesses).toBeLessThan(BEFORE.gitProcesses);
    // The same durable points: every fact of the turn is still its own append.
    expect(counts.appends).toBe(BEFORE.appends);
  }, 120_000);
});
