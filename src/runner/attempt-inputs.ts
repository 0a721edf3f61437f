import { planGateChanges } from "../core/gate-change-plan.js";
import { protectedGlobs } from "../core/task.js";
import type { GateState } from "./gate-run.js";
import type { RunContext } from "./run-context.js";
import { pristineId } from "./run-log.js";

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

async function load(ctx: RunContext, afterId: string): Promise<GateState> {
  const task = ctx.loaded.task;
  const pristine = await ctx.observations.get(pristineId(ctx.journal.current));
  const after = await ctx.observations.get(afterId);
  const plan = planGateChanges(pristine, after, {
    deliverables: task.deliverables,
    protected: protectedGlobs(task),
  });
  return { pristine, after, plan };
}
