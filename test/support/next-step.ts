/**
 * given / when / then for the run's next step:
 *
 *   givenRun([started(["a"]), pristine()]).whenNextStep({ gates: ["a"] }).thenStep({ kind: "start_attempt", … })
 *
 * The expected step is written out by the test, never computed by the code under test.
 */
import { expect } from "vitest";
import type { EventBody } from "../../src/core/run/run-decider.js";
import { foldRun, type RunState } from "../../src/core/run/run-state.js";
import {
  nextRunStep,
  type ResumeStart,
  type RunStep,
  resumeStart,
  type StepTask,
} from "../../src/core/run/run-step.js";

export interface NextStepWhen {
  thenStep(expected: RunStep): void;
  thenError(message: RegExp): void;
  /** What a resume of this log does first. */
  thenResumeStarts(expected: ResumeStart): void;
}

export function givenRun(events: readonly EventBody[]): {
  state: RunState;
  whenNextStep(task: StepTask): NextStepWhen;
} {
  const state = foldRun(events);
  return {
    state,
    whenNextStep: (task) => ({
      thenStep: (expected) => expect(nextRunStep(state, task)).toEqual(expected),
      thenError: (message) => expect(() => nextRunStep(state, task)).toThrow(message),
      thenResumeStarts: (expected) => expect(resumeStart(state, task)).toBe(expected),
    }),
  };
}
