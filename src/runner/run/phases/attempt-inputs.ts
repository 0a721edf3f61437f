import { changePlanDigest } from "../../../core/observation/gate-change-digest.js";
import { planGateChanges } from "../../../core/observation/gate-change-plan.js";
import type { Observation } from "../../../core/observation/observation.js";
import { gateChangeRules, type Task } from "../../../core/task/task.js";
import type { RunContext } from "../context/run-context.js";
import { pristineObservation } from "../context/workspace-layout.js";
import type { GateState } from "./gate-run.js";

/**
 * The observations an attempt's gates and judge work on, and the gate-change plan between them: read
 * and computed once per attempt (per after-builder observation), not once per gate.
 */
export function attemptInputs(ctx: RunContext): (afterObservationId: string) => Promise<GateState> {
  let cached: { id: string; inputs: Promise<GateState> } | null = null;
  return (id) => {
    if (cached?.id !== id) {
      const inputs = load(ctx, id);
      // A failed read is not kept: the next step reads again.
      inputs.catch(() => {
        if (cached?.inputs === inputs) cached = null;
      });
      cached = { id, inputs };
    }
    return cached.inputs;
  };
}

/** The gate-change plan from `pristine` to `after` by the task's rules, with the digest its gates record. */
export function gateState(
  task: Pick<Task, "deliverables" | "protected" | "dependencies">,
  pristine: Observation,
  after: Observation,
): GateState {
  const plan = planGateChanges(pristine, after, gateChangeRules(task));
  return { pristine, after, plan, planDigest: changePlanDigest(plan) };
}

async function load(ctx: RunContext, afterId: string): Promise<GateState> {
  const pristine = await pristineObservation(ctx);
  const after = await ctx.observations.get(afterId);
  return gateState(ctx.loaded.task, pristine, after);
}
