/** The goal control plane (seed 001): source facts, the goal decider and the derived decisions. */
export * from "./gates.js";
export * from "./goal-decider.js";
export * from "./goal-events.js";
export type {
  AcceptanceReceipt,
  Completion,
  GoalState,
  SpendRecord,
  TodoState,
  VisionState,
} from "./goal-state.js";
export { evolve as evolveGoal, foldGoal, initialState as initialGoalState } from "./goal-state.js";
export * from "./todo-rules.js";
