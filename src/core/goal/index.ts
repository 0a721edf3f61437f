/** The goal control plane: source facts, the goal decider and the derived decisions. */

export * from "./budget.js";
export * from "./closure.js";
export * from "./contract.js";
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
export * from "./handoff.js";
export * from "./obligations.js";
export * from "./projection.js";
export * from "./replan.js";
export * from "./runtime-state.js";
export * from "./todo-rules.js";
