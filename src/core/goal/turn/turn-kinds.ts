import type { TurnWork } from "../../events/goal/turn-events.js";

/** Every kind of `TurnWork`, each once: a new kind fails to compile here until it is listed. */
const WORK_KINDS: Record<TurnWork["kind"], true> = { todo: true, replan: true, acceptance: true };

/**
 * The kinds of work a turn binds to, as the turn decider takes them (`TurnWork`): a todo, a replan
 * obligation, the acceptance items. Listed once so a host can check it settles every one.
 */
export const TURN_WORK_KINDS = Object.keys(WORK_KINDS) as readonly TurnWork["kind"][];

/**
 * The kinds of turn a host settles: the work kinds, with a todo turn whose todo is a continuous monitor
 * told apart (its host effect is a poll and its writeback the monitor's goal command, not a run and a commit).
 */
export type TurnKindName = TurnWork["kind"] | "monitor";
export const TURN_KINDS: readonly TurnKindName[] = [...TURN_WORK_KINDS, "monitor"];
