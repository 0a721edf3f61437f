import type { GoalState } from "../../../core/goal/goal-state-shape.js";
import type { TurnKindName } from "../../../core/goal/turn/turn-kinds.js";
import type { TurnState } from "../../../core/goal/turn/turn-state.js";
import { LoopgateError } from "../../../core/kernel/errors.js";
import { acceptanceKind } from "./acceptance-kind.js";
import { monitorKind } from "./monitor-kind.js";
import { isMonitorTurn } from "./monitor-step.js";
import { replanKind } from "./replan-kind.js";
import { todoKind } from "./todo-kind.js";
import type { TurnKind } from "./turn-kind.js";

/**
 * The one place a kind's name meets its implementation: the tick and the selection ask here, and
 * nothing else branches on the kind. The record's type makes every name of core's `TurnKindName`
 * required, so a kind added there does not compile until it is registered.
 */
const KINDS: Readonly<Record<TurnKindName, TurnKind>> = {
  todo: todoKind,
  monitor: monitorKind,
  replan: replanKind,
  acceptance: acceptanceKind,
};

/** The kind registered under `name`; an unknown name is refused (never a default kind). */
export function turnKind(name: string): TurnKind {
  const kind = Object.hasOwn(KINDS, name) ? KINDS[name as TurnKindName] : undefined;
  if (!kind)
    throw new LoopgateError(
      "unknown_turn_kind",
      `no turn kind "${name}": this host settles ${Object.keys(KINDS).join(", ")}`,
    );
  return kind;
}

/** The names the registry holds. */
export const registeredKinds = (): string[] => Object.keys(KINDS);

/** A bound turn's kind: its work's, a todo whose todo is a continuous monitor being a monitor's poll. */
export function kindOfTurn(s: GoalState, t: TurnState): TurnKind {
  const work = t.work?.kind ?? "todo";
  return turnKind(work === "todo" && isMonitorTurn(s, t) ? "monitor" : work);
}
