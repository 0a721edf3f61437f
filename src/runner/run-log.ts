import { InfrastructureError } from "../core/errors.js";
import type { LoopgateEvent } from "../core/events.js";

/** The id of the last observation recorded of `phase` (or by the agent), scanning backwards. */
export function lastObservationId(events: readonly LoopgateEvent[]): string | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i];
    if (e?.type === "workspace_touched") return e.data.observation_id;
    if (e?.type === "workspace_observed") return e.data.observation_id;
  }
  return null;
}

/** The id of the run's pristine observation; every run that got past preparing has one. */
export function pristineId(events: readonly LoopgateEvent[]): string {
  const e = events.find((x) => x.type === "workspace_observed" && x.data.phase === "pristine");
  if (e?.type !== "workspace_observed")
    throw new InfrastructureError("the run's log has no pristine observation");
  return e.data.observation_id;
}
