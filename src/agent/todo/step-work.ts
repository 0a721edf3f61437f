import { appraiseStep, type CheckStatus, renderFinding, spanOf } from "../../core/agent/step-appraisal.js";
import type { EscalationInput, EscalationTrigger } from "../../core/agent/step-escalation.js";
import type { EventData, LoopgateEvent } from "../../core/events/loopgate-event.js";
import type { AgentEventBody } from "../../core/run/run-decider.js";
import type { ModelAdapter } from "../models/model.js";
import { bashTool } from "../tools/bash.js";
import type { ToolContext } from "../tools/tool.js";
import { executeToolCall } from "../tools/tool-registry.js";
import { escalateStep } from "./escalation.js";

/** The hard cap on declared checks executed per run. */
export const MAX_STEP_CHECKS = 16;

/** Whether declared checks execute, and how many may per run (at most MAX_STEP_CHECKS). */
export interface StepCheckPolicy {
  enabled: boolean;
  max: number;
}

/**
 * Carrying out the step actions core/agent/agent-decider.ts decides (which step, whether its check runs or why
 * not, which appraised step escalates): each function does the work and returns the facts to record.
 */

/** Runs a frozen check through the same sandbox as the bash tool (`skipped`: why it does not run). */
export async function runStepCheck(
  a: {
    attempt: number;
    callId: string;
    step: string;
    command: string;
    checkId: string;
    skipped: string | null;
  },
  toolCtx: ToolContext,
  observeAfter: (callId: string) => Promise<string | null>,
): Promise<{ check: EventData<"step_check_ran">; touched: string | null }> {
  const base = { attempt: a.attempt, call_id: a.callId, step: a.step, command: a.command.slice(0, 4000) };
  if (a.skipped !== null)
    return {
      check: { ...base, status: "skipped", exit_code: null, detail: a.skipped, duration_ms: 0 },
      touched: null,
    };
  const r = await executeToolCall(
    [bashTool],
    { id: a.checkId, name: bashTool.name, args: { command: a.command } },
    toolCtx,
  );
  let status: CheckStatus;
  if (!r.valid) status = "refused";
  else if (r.exitCode === 0 && !r.isError) status = "passed";
  else if (r.exitCode !== null || r.content.startsWith("timed out")) status = "failed";
  else status = "unavailable";
  const touched = r.valid ? await observeAfter(a.checkId) : null;
  return {
    check: {
      ...base,
      status,
      exit_code: r.exitCode,
      detail: r.content.slice(0, 2000),
      duration_ms: r.durationMs,
    },
    touched,
  };
}

/** The appraisal of a completed step from the recorded tool calls of its span (`at`: its write in `events`). */
export function appraisal(
  events: readonly LoopgateEvent[],
  a: { attempt: number; callId: string; step: string; at: number; check: EventData<"step_check_ran"> | null },
): AgentEventBody {
  const check = a.check;
  const span = spanOf(events, a.at, a.step, check ? { status: check.status } : null);
  const found = appraiseStep(span);
  const repeated =
    found.finding !== null &&
    found.finding !== "landed" &&
    events.some(
      (e) => e.type === "step_appraised" && e.data.step === a.step && e.data.finding === found.finding,
    );
  return {
    type: "step_appraised",
    data: {
      attempt: a.attempt,
      call_id: a.callId,
      step: a.step,
      finding: found.finding,
      measured: found.measured,
      calls: spanOf(events, a.at, a.step, null).calls?.length ?? 0,
      check: check
        ? { command: check.command, exit_code: check.exit_code, verified: check.status === "passed" }
        : null,
      rendered: renderFinding(a.step, found.finding, { repeated, check }).slice(0, 4000),
    },
  };
}

/** Asks the quarantined reviewer about a step that tripped a trigger; null when an interrupt cut it short. */
export async function escalation(
  model: ModelAdapter,
  a: {
    attempt: number;
    callId: string;
    step: string;
    trigger: EscalationTrigger;
    input: EscalationInput;
    used: number;
  },
  signal?: AbortSignal,
): Promise<AgentEventBody | null> {
  const decision = await escalateStep(model, a.input, a.trigger, undefined, signal);
  if (signal?.aborted) return null;
  return {
    type: "step_escalated",
    data: {
      attempt: a.attempt,
      call_id: a.callId,
      step: a.step,
      trigger: a.trigger,
      decision,
      escalations_used: a.used + 1,
    },
  };
}
