/** Governed turns: settlement, scheduler hint and backoff, monitor polls. Pure. */
export * from "./backoff-history.js";
export * from "./monitor.js";
export * from "./monitor-events.js";
export * from "./monitor-goal.js";
export * from "./schedule-step.js";
export * from "./scheduler.js";
export * from "./turn-decider.js";
export * from "./turn-event-decl.js";
export * from "./turn-events.js";
export * from "./turn-lease.js";
export * from "./turn-state.js";
