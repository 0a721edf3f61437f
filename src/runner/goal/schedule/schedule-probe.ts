import { interactionContract } from "../../../core/goal/contract.js";
import { scheduleView } from "../../../core/goal/schedule/backoff-history.js";
import { type BackoffPolicy, DEFAULT_BACKOFF } from "../../../core/goal/schedule/scheduler.js";
import type { EventStore } from "../../../store/kernel/event-store.js";
import { goalState } from "../goal-engine.js";
import { openGoal } from "../goal-service.js";
import { listGoalIds } from "../goal-store.js";
import type { ScheduleProbe } from "./goal-loop.js";
import type { ScheduledGoal } from "./store-scheduler.js";

/**
 * The schedule probe over a store: the goal's contract now (with the observed health) and the backoff
 * its recorded turns earned. Reads only; scheduling never writes a goal fact and never spends.
 */
export function storeProbe(
  store: EventStore,
  localDir: string,
  policy: BackoffPolicy = DEFAULT_BACKOFF,
): ScheduleProbe {
  return async (goalId, now) => {
    const { log, facts } = await openGoal(store, localDir, goalId, now);
    const contract = interactionContract(goalState(log.events), {
      now,
      health: facts.health,
    });
    return scheduleView(log.events, contract, policy);
  };
}

/** The goals of a store the scheduler ticks: active (a stopped goal runs nothing) and not closed. */
export function storeGoals(store: EventStore, localDir: string): () => Promise<ScheduledGoal[]> {
  return async () => {
    const out: ScheduledGoal[] = [];
    for (const goalId of await listGoalIds(store)) {
      const { view } = await openGoal(store, localDir, goalId);
      if (view.activation === "active" && !view.closed) out.push({ goalId, agentId: view.agent.agent_id });
    }
    return out;
  };
}
