import { type InteractionContract, interactionContract } from "../../../core/goal/contract.js";
import { monitorDueTimes } from "../../../core/goal/monitor-goal.js";
import { contractView, nextWakeUp, type WakeUp } from "../../../core/goal/schedule/scheduler.js";
import { goalStateHealth } from "../goal-service.js";
import type { TickCtx } from "./tick-context.js";

/**
 * The interaction contract now, with the health facts (task files, the goal workspace). The goal is the
 * journal's (read once per tick, every own append folded in); only the health is looked up, as it is all
 * the contract takes from outside the stream.
 */
export async function contractNow(ctx: TickCtx): Promise<{ contract: InteractionContract; wake: WakeUp }> {
  const now = ctx.now();
  const state = ctx.j.state;
  const health = await goalStateHealth(ctx.deps.store, ctx.deps.localDir, state);
  const contract = interactionContract(state, {
    now,
    health: health.problems,
  });
  const wake = nextWakeUp(contractView(contract), {
    now,
    monitorDue: monitorDueTimes(contract.monitors, now),
    backoff: null,
  });
  return { contract, wake };
}
