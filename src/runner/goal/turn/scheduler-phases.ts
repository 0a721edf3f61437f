import {
  type SchedulerHintFact,
  schedulerRef,
  type TurnIdentity,
} from "../../../core/events/goal/turn-events.js";
import type { WakeUp } from "../../../core/goal/schedule/scheduler.js";
import { contractNow } from "./contract-now.js";
import { type TickCtx, turnDecision } from "./tick-context.js";

/** The host when no scheduler runs beside the tick (one `goal tick`): its cadence is "ask again", which matches. */
export const oneShotHost = async (_wake: WakeUp) => "host_match" as const;

/** scheduler_apply: the next wake-up from the contract after the turn, recorded before the host is told. */
export async function applySchedule(ctx: TickCtx, id: TurnIdentity): Promise<void> {
  const { wake } = await contractNow(ctx);
  ctx.progress({
    phase: "scheduler_apply",
    detail: `${wake.action}${wake.at ? ` at ${wake.at}` : ""}: ${wake.why}`,
  });
  await ctx.j.append(
    turnDecision({
      type: "record_scheduler_apply",
      identity: id,
      effectRef: schedulerRef(id),
      hint: {
        action: wake.action,
        not_before: wake.at,
        why: wake.why,
        ...(wake.terminal ? { terminal: true } : {}),
      },
    }),
  );
}

/** scheduler_ack: tell the host, and record its ACK or the failure receipt (never claim it changed without one). */
export async function ackSchedule(ctx: TickCtx, id: TurnIdentity, hint: SchedulerHintFact): Promise<void> {
  const host = ctx.deps.scheduleHost ?? oneShotHost;
  const wake = wakeOfHint(hint);
  let outcome: { kind: "ack"; mode: "host_match" | "host_updated" } | { kind: "failed"; reason: string };
  try {
    outcome = { kind: "ack", mode: await host(wake) };
  } catch (e) {
    outcome = { kind: "failed", reason: `the host did not take the hint: ${(e as Error).message}` };
  }
  ctx.progress({ phase: "scheduler_ack", detail: outcome.kind === "ack" ? outcome.mode : outcome.reason });
  await ctx.j.append(
    turnDecision({ type: "record_scheduler_ack", identity: id, effectRef: schedulerRef(id), outcome }),
  );
}

/** The wake-up a recorded hint stands for (a turn that closed the goal keeps saying so: `terminal`). */
export function wakeOfHint(hint: SchedulerHintFact): WakeUp {
  const wake: WakeUp = { action: hint.action as WakeUp["action"], at: hint.not_before, why: hint.why };
  return hint.terminal ? { ...wake, terminal: true } : wake;
}
