import { describe, expect, it } from "vitest";
import {
  IllegalWorkerTransition,
  transition,
  type WorkerState,
} from "../../../src/runner/host/worker-state.js";

// The worker's life as the worker command documents it: it claims (running); a stop request, --once after
// its job or local failures in a row make it claim nothing more and finish what it holds (draining); it
// ends cleanly (stopped) or having lost the database or its ability to start jobs (failed). An ended
// worker never runs again, and a draining one never goes back to claiming.
const STATES: readonly WorkerState[] = ["running", "draining", "stopped", "failed"];
const LEGAL: ReadonlyArray<readonly [WorkerState, WorkerState]> = [
  ["running", "draining"],
  ["running", "stopped"], // --once or --until-idle with nothing held
  ["running", "failed"], // the database lost while claiming
  ["draining", "stopped"],
  ["draining", "failed"],
];
const isLegal = (from: WorkerState, to: WorkerState) => LEGAL.some(([a, b]) => a === from && b === to);

describe("the worker's states", () => {
  for (const [from, to] of LEGAL)
    it(`${from} → ${to} is a transition`, () => {
      expect(transition(from, to)).toBe(to);
    });

  const illegal = STATES.flatMap((from) =>
    STATES.filter((to) => !isLegal(from, to)).map((to) => [from, to] as const),
  );
  it("every other pair is refused (16 pairs, 5 legal)", () => {
    expect(illegal).toHaveLength(16 - LEGAL.length);
  });
  for (const [from, to] of illegal)
    it(`${from} → ${to} is refused`, () => {
      expect(() => transition(from, to)).toThrow(IllegalWorkerTransition);
      expect(() => transition(from, to)).toThrow(`a worker cannot go from ${from} to ${to}`);
    });
});
