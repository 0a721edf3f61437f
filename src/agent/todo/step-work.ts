import type { EventData, LoopgateEvent, Origin } from "../../core/events.js";
import type { AgentEventBody } from "../../core/run-decider.js";
import { appraiseStep, type CheckStatus, renderFinding, spanOf } from "../../core/step-appraisal.js";
import { escalationsUsed, nextEscalation } from "../../core/step-escalation.js";
import type { ModelAdapter } from "../model.js";
import { bashTool } from "../tools/bash.js";
import { executeToolCall } from "../tools/registry.js";
import type { ToolContext } from "../tools/tool.js";
import { escalateStep } from "./escalation.js";

/** The hard cap on declared checks executed per run. */
export const MAX_STEP_CHECKS = 16;

/** Whether declared checks execute, and how many may per run (at most MAX_STEP_CHECKS). */
export interface StepCheckPolicy {
  enabled: boolean;
  max: number;
}

export interface StepWorkDeps {
  attempt: number;
  events(): readonly LoopgateEvent[];
  checks: StepCheckPolicy;
  toolCtx: ToolContext;
  record(event: AgentEventBody, origin?: Origin): Promise<void>;
  observeAfter(callId: string): Promise<string | null>;
  /** The quarantined model consulted when a landed step trips a trigger; absent: escalation is off. */
  escalation?: ModelAdapter;
  /** An interrupt: a check or escalation it cut short is not recorded (the caller stops). */
  signal?: AbortSignal;
}

/** A completion of this attempt not yet appraised: the write's index in the run's events and the step. */
function nextCompletion(
  events: readonly LoopgateEvent[],
  attempt: number,
): { at: number; step: string } | null {
  const appraised = new Set<string>();
  for (const e of events)
    if (e.type === "step_appraised") appraised.add(`${e.data.call_id}\u0000${e.data.step}`);
  for (let at = 0; at < events.length; at++) {
    const e = events[at];
    if (e?.type !== "todo_written" || e.data.attempt !== attempt) continue;
    for (const step of e.data.completed)
      if (!appraised.has(`${e.data.call_id}\u0000${step}`)) return { at, step };
  }
  return null;
}

/**
 * After a batch of tool calls has finished: runs the next declared check of a step completed in it (or
 * records why it did not run), else appraises the next completed step. Returns false when there is nothing
 * to do; one fact is recorded per call, so the loop stays a fold over its events.
 */
export async function runStepWork(d: StepWorkDeps): Promise<boolean> {
  const events = d.events();
  const next = nextCompletion(events, d.attempt);
  if (!next) return d.escalation ? escalate(d, d.escalation, events) : false;
  const write = events[next.at] as Extract<LoopgateEvent, { type: "todo_written" }>;
  const callId = write.data.call_id;
  const command = write.data.items.find((x) => x.content === next.step)?.check ?? null;
  const ran = events.findLast(
    (e) => e.type === "step_check_ran" && e.data.call_id === callId && e.data.step === next.step,
  ) as Extract<LoopgateEvent, { type: "step_check_ran" }> | undefined;
  if (command !== null && !ran) {
    const data = await runCheck(d, events, callId, next.step, command);
    if (!d.signal?.aborted) await d.record({ type: "step_check_ran", data });
    return true;
  }
  const check: EventData<"step_check_ran"> | null = ran?.data ?? null;
  const a = appraiseStep(spanOf(events, next.at, next.step, check ? { status: check.status } : null));
  const repeated =
    a.finding !== null &&
    a.finding !== "landed" &&
    events.some(
      (e) => e.type === "step_appraised" && e.data.step === next.step && e.data.finding === a.finding,
    );
  await d.record({
    type: "step_appraised",
    data: {
      attempt: d.attempt,
      call_id: callId,
      step: next.step,
      finding: a.finding,
      measured: a.measured,
      calls: spanCalls(events, next.at, next.step),
      check: check
        ? { command: check.command, exit_code: check.exit_code, verified: check.status === "passed" }
        : null,
      rendered: renderFinding(next.step, a.finding, { repeated, check }).slice(0, 4000),
    },
  });
  return true;
}

/** Escalates the next appraised step that trips a trigger, under the run's cap; one event per call. */
async function escalate(
  d: StepWorkDeps,
  model: ModelAdapter,
  events: readonly LoopgateEvent[],
): Promise<boolean> {
  const next = nextEscalation(events, d.attempt);
  if (!next) return false;
  const decision = await escalateStep(model, next.input, next.trigger, undefined, d.signal);
  if (d.signal?.aborted) return true;
  await d.record({
    type: "step_escalated",
    data: {
      attempt: d.attempt,
      call_id: next.callId,
      step: next.input.step,
      trigger: next.trigger,
      decision,
      escalations_used: escalationsUsed(events) + 1,
    },
  });
  return true;
}

function spanCalls(events: readonly LoopgateEvent[], at: number, step: string): number {
  return spanOf(events, at, step, null).calls?.length ?? 0;
}

/** Runs a frozen check through the same sandbox as the bash tool, unless disabled or over the cap. */
async function runCheck(
  d: StepWorkDeps,
  events: readonly LoopgateEvent[],
  callId: string,
  step: string,
  command: string,
): Promise<EventData<"step_check_ran">> {
  const base = { attempt: d.attempt, call_id: callId, step, command: command.slice(0, 4000) };
  const skipped = (detail: string) => ({
    ...base,
    status: "skipped" as const,
    exit_code: null,
    detail,
    duration_ms: 0,
  });
  if (!d.checks.enabled) return skipped("step checks are disabled for this run");
  const max = Math.min(d.checks.max, MAX_STEP_CHECKS);
  const dispatched = events.filter((e) => e.type === "step_check_ran" && e.data.status !== "skipped").length;
  if (dispatched >= max) return skipped(`the limit of ${max} step checks per run is reached`);
  const checkId = `${callId}:check:${dispatched + 1}`;
  const r = await executeToolCall(
    [bashTool],
    { id: checkId, name: bashTool.name, args: { command } },
    d.toolCtx,
  );
  let status: CheckStatus;
  if (!r.valid) status = "refused";
  else if (r.exitCode === 0 && !r.isError) status = "passed";
  else if (r.exitCode !== null || r.content.startsWith("timed out")) status = "failed";
  else status = "unavailable";
  if (r.valid) {
    const changed = await d.observeAfter(checkId);
    if (changed)
      await d.record({
        type: "workspace_touched",
        data: { attempt: d.attempt, call_id: checkId, observation_id: changed },
      });
  }
  return {
    ...base,
    status,
    exit_code: r.exitCode,
    detail: r.content.slice(0, 2000),
    duration_ms: r.durationMs,
  };
}
