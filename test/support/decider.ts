/**
 * given / when / then for deciders. Every decider test uses this one helper:
 *
 *   given(runDecider, [started, attempt(1)]).when({ kind: "record_gate", ... }).thenEvents([gateFinished])
 *   given(runDecider, [finishedRun]).when({ kind: "start_attempt" }).thenError(/run is finished/)
 *
 * A decider is `{ initialState, evolve, decide }` (docs/architecture.md: decide(command, state) → events,
 * evolve(state, event) → state). (Not `then`: an object with `then` is a thenable.) `thenEvents` compares the decided events with deep equality, so
 * the expected list is written out by the test, never computed by the code under test.
 */
import { expect } from "vitest";
import type { Decider } from "../../src/core/kernel/decider.js";

export type { Decider };

export interface WhenStep<State, Event> {
  /** The decided events equal `expected` exactly (order included). */
  thenEvents(expected: Event[]): Event[];
  /** The command is refused: `decide` throws an error whose message matches `message`. */
  thenError(message: RegExp | string, errorClass?: new (...args: never[]) => Error): Error;
  /** The decided events, for assertions the list form cannot express. */
  events(): Event[];
  /** The state after the given events and the decided ones. */
  state(): State;
}

export interface GivenStep<State, Command, Event> {
  when(command: Command): WhenStep<State, Event>;
  /** The state the given events fold to. */
  state(): State;
}

export function fold<State, Event>(
  decider: Pick<Decider<State, unknown, Event>, "initialState" | "evolve">,
  events: readonly Event[],
): State {
  return events.reduce((state, event) => decider.evolve(state, event), decider.initialState());
}

export function given<State, Command, Event>(
  decider: Decider<State, Command, Event>,
  events: readonly Event[],
): GivenStep<State, Command, Event> {
  const before = fold(decider, events);
  return {
    state: () => before,
    when(command) {
      const decided = () => decider.decide(command, before);
      return {
        thenEvents(expected) {
          const actual = decided();
          expect(actual).toEqual(expected);
          return actual;
        },
        thenError(message, errorClass) {
          let caught: unknown;
          try {
            decided();
          } catch (error) {
            caught = error;
          }
          expect(caught, "the command was accepted but should have been refused").toBeInstanceOf(
            errorClass ?? Error,
          );
          const error = caught as Error;
          if (typeof message === "string") expect(error.message).toContain(message);
          else expect(error.message).toMatch(message);
          return error;
        },
        events: decided,
        state: () => decided().reduce((state, event) => decider.evolve(state, event), before),
      };
    },
  };
}
