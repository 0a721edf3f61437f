import type { TurnIdentity, Usage } from "../../../core/events/goal/turn-events.js";
import type { TurnState } from "../../../core/goal/turn/turn-state.js";
import {
  acceptanceSummary,
  acceptanceUsage,
  executeAcceptanceHost,
  executeAcceptanceWriteback,
  readbackAcceptanceHost,
  readbackAcceptanceWriteback,
  recordAcceptanceResult,
} from "./acceptance-step.js";
import { executeHost, readbackHost, recordResult } from "./host-step.js";
import {
  executeMonitorHost,
  executeMonitorWriteback,
  isMonitorTurn,
  monitorSummary,
  readbackMonitorHost,
  readbackMonitorWriteback,
  recordMonitorResult,
} from "./monitor-step.js";
import {
  executeReplanHost,
  executeReplanWriteback,
  readbackReplanHost,
  readbackReplanWriteback,
  recordReplanResult,
  replanSummary,
  replanUsage,
} from "./replan-step.js";
import { executeWriteback, readbackWritebackStep } from "./settle-step.js";
import type { TickCtx } from "./tick-context.js";

/**
 * The host effects of a turn by its work: an advancement todo (a run, a git writeback), a continuous
 * monitor (a poll, the monitor's goal command) or a replan obligation (a planner turn, its answer).
 */
type Kind = "todo" | "monitor" | "replan" | "acceptance";
const kindOf = (ctx: TickCtx, t: TurnState): Kind =>
  t.work?.kind === "replan" || t.work?.kind === "acceptance"
    ? t.work.kind
    : isMonitorTurn(ctx.j.state, t)
      ? "monitor"
      : "todo";

export async function hostStep(ctx: TickCtx, id: TurnIdentity, t: TurnState, readback: boolean) {
  switch (kindOf(ctx, t)) {
    case "monitor":
      return readback ? readbackMonitorHost(ctx, id, t) : executeMonitorHost(ctx, id, t);
    case "replan":
      return readback ? readbackReplanHost(ctx, id) : executeReplanHost(ctx, id, t);
    case "acceptance":
      return readback ? readbackAcceptanceHost(ctx, id, t) : executeAcceptanceHost(ctx, id, t);
    case "todo":
      return readback ? readbackHost(ctx, id, t) : void (await executeHost(ctx, id, t));
  }
}

export async function writebackStep(ctx: TickCtx, id: TurnIdentity, t: TurnState, readback: boolean) {
  switch (kindOf(ctx, t)) {
    case "monitor":
      return readback ? readbackMonitorWriteback(ctx, id, t) : executeMonitorWriteback(ctx, id, t);
    case "replan":
      return readback ? readbackReplanWriteback(ctx, id, t) : executeReplanWriteback(ctx, id, t);
    case "acceptance":
      return readback ? readbackAcceptanceWriteback(ctx, id, t) : executeAcceptanceWriteback(ctx, id, t);
    case "todo":
      return readback ? readbackWritebackStep(ctx, id, t) : executeWriteback(ctx, id, t);
  }
}

export async function resultStep(
  ctx: TickCtx,
  id: TurnIdentity,
  t: TurnState,
  phase: "typed_result" | "validation",
) {
  switch (kindOf(ctx, t)) {
    case "monitor":
      return recordMonitorResult(ctx, id, phase);
    case "replan":
      return recordReplanResult(ctx, id, phase);
    case "acceptance":
      return recordAcceptanceResult(ctx, id, t, phase);
    case "todo":
      return recordResult(ctx, id, t, phase);
  }
}

/** The usage a turn's quota_spend charges: a poll is one turn and no tokens; a planner turn its model's usage; a run its envelope's (undefined: read it). */
export async function turnUsage(ctx: TickCtx, id: TurnIdentity, t: TurnState): Promise<Usage | undefined> {
  switch (kindOf(ctx, t)) {
    case "monitor":
      return { tokens: 0, cost_usd: 0, turns: 1 };
    case "replan":
      return replanUsage(ctx, id);
    case "acceptance":
      return acceptanceUsage;
    case "todo":
      return undefined;
  }
}

/** What a settled turn did, for the tick's outcome. */
export function turnSummary(
  ctx: TickCtx,
  id: TurnIdentity,
  t: TurnState,
): { result: string; changed: boolean } {
  switch (kindOf(ctx, t)) {
    case "monitor":
      return monitorSummary(ctx.j.state, id, t);
    case "replan":
      return replanSummary(ctx.j.state, id, t);
    case "acceptance":
      return acceptanceSummary(ctx.j.state, id, t);
    case "todo": {
      const todo = t.work?.kind === "todo" ? t.work.todo_id : "";
      return {
        result: `${todo} done on evidence of run ${t.host?.run_ref}; revision ${t.writeback?.new_revision.slice(0, 12)}`,
        changed: true,
      };
    }
  }
}
