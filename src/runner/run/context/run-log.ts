import { InfrastructureError } from "../../../core/kernel/errors.js";
import type { RunState } from "../../../core/run/run-decider.js";

/** The id of the run's pristine observation; every run that got past preparing has one. */
export function pristineId(state: RunState): string {
  if (state.pristineObservationId === null)
    throw new InfrastructureError("the run's log has no pristine observation");
  return state.pristineObservationId;
}
