/**
 * A decider: the one shape of every write model in loopgate (a run, an agent's attempt, a goal, a turn,
 * a monitor). `decide` turns a command and the current state into the events to record — or throws,
 * naming the rule that refuses it — and never records anything itself; `evolve` folds one recorded event
 * into the state, so the state of a stream is its events folded from `initialState()`. Both are pure:
 * the same events always give the same state, and the same state and command the same decision, which is
 * what lets a journal fold incrementally and decide again after losing a race (docs/architecture.md,
 * "The layers of the code").
 */
export interface Decider<State, Command, Event> {
  initialState(): State;
  evolve(state: State, event: Event): State;
  decide(command: Command, state: State): Event[];
}
