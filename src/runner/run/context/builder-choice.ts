import type { AgentBuilder } from "../../../agent/agent-builder.js";
import type { Builder } from "../../../builders/builder.js";

/** An external builder (a command, the oracle, nothing): run as a process, never the built-in agent. */
export type ExternalChoice = Builder & { agent?: never };

/** loopgate's built-in agent, whose turn loop the runner drives; it has no command, mounts or preflight. */
export type AgentChoice = AgentBuilder & {
  run?: never;
  needs?: never;
  preflight?: never;
  cannotStart?: never;
};

/** What builds an attempt: `external` or `agent`. The runner tells them apart by `agent`. */
export type BuilderChoice = ExternalChoice | AgentChoice;

/** Whether the choice is the built-in agent. */
export function isAgentChoice(b: BuilderChoice): b is AgentChoice {
  return b.agent !== undefined;
}
