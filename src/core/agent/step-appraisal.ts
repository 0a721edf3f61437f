import type { EventData, LoopgateEvent } from "../events/loopgate-event.js";

/**
 * Step appraisal: a pure function of the tool-call span between a plan step going in progress and being
 * marked completed. No model, no threshold: the span is arithmetic over recorded tool calls.
 */

/** How one tool call in a step's span ended. `refused`: it did not run (invalid, refused path, abandoned). */
export type CallOutcome = "succeeded" | "failed" | "refused";

/** What happened to a step's declared check. Only `passed` verifies; every other status leaves it unverified. */
export type CheckStatus = "passed" | "failed" | "refused" | "unavailable" | "skipped";

export type StepFinding = "landed" | "null_step" | "ended_on_failure" | "ended_on_refusal" | "check_failed";

/** The span of one completed step, as the appraisal reads it. */
export interface StepSpan {
  /** The tool calls finished inside the span, in order (plan-tool calls excluded); null when the step
   * never went in progress before it was completed, so there is no span to measure. */
  calls: readonly CallOutcome[] | null;
  /** A sibling call of the completing batch had not finished when the step was marked completed. */
  siblingInFlight: boolean;
  /** Another call of the completing batch was refused: it cannot be attributed to this step over any other. */
  batchDenial: boolean;
  /** The step's declared check, when it has one. */
  check: { status: CheckStatus } | null;
}

/** `finding` null: no finding (ambiguous, or the step never went in progress); `measured` says the span was clean. */
export interface Appraisal {
  finding: StepFinding | null;
  measured: boolean;
}

/**
 * The five findings, read in order: a declared check that ran and did not pass first (the last call may have
 * succeeded while the claim did not); then ambiguity (a sibling in flight, a denial in the same batch) reads
 * as no finding; then zero calls, a last call refused, a last call failed; otherwise the step landed.
 */
export function appraiseStep(span: StepSpan): Appraisal {
  const clean = span.calls !== null && !ambiguous(span);
  if (span.check?.status === "failed") return { finding: "check_failed", measured: clean };
  if (!clean || span.calls === null) return { finding: null, measured: false };
  const last = span.calls[span.calls.length - 1];
  if (last === undefined) return { finding: "null_step", measured: true };
  if (last === "refused") return { finding: "ended_on_refusal", measured: true };
  if (last === "failed") return { finding: "ended_on_failure", measured: true };
  return { finding: "landed", measured: true };
}

function ambiguous(span: StepSpan): boolean {
  return span.siblingInFlight || span.batchDenial;
}

/** How a finished (or abandoned) tool call counts in a span. */
export function callOutcome(e: LoopgateEvent): CallOutcome | null {
  if (e.type === "tool_call_abandoned") return "refused";
  if (e.type !== "tool_call_finished") return null;
  if (!e.data.valid) return "refused";
  if (e.data.is_error && e.data.exit_code === null && e.data.content.startsWith("refused")) return "refused";
  return e.data.is_error ? "failed" : "succeeded";
}

/** The plan tool's name: its own calls are bookkeeping, not work, and are left out of spans. */
export const TODO_TOOL = "todo";

/**
 * The span of step `step` completed by the `todo_written` event at index `at` of `events` (one run's
 * events): from the latest earlier write that had the step in progress. Null when the step never went in
 * progress before it was completed: `calls` is then null (no span to measure).
 */
export function spanOf(
  events: readonly LoopgateEvent[],
  at: number,
  step: string,
  check: { status: CheckStatus } | null,
): StepSpan {
  const none: StepSpan = { calls: null, siblingInFlight: false, batchDenial: false, check };
  const done = events[at];
  if (done?.type !== "todo_written") return none;
  let start = -1;
  for (let i = at - 1; i >= 0; i--) {
    const e = events[i];
    if (e?.type !== "todo_written") continue;
    const item = e.data.items.find((x) => x.content === step);
    if (item?.status === "in_progress") {
      start = i;
      break;
    }
    if (item?.status === "completed") break;
  }
  if (start < 0) return none;
  const names = new Map<string, string>();
  for (const e of events) if (e.type === "tool_call_started") names.set(e.data.call_id, e.data.name);
  const calls: CallOutcome[] = [];
  for (let i = start + 1; i < at; i++) {
    const e = events[i];
    if (!e) continue;
    const name =
      e.type === "tool_call_finished"
        ? e.data.name
        : e.type === "tool_call_abandoned"
          ? names.get(e.data.call_id)
          : null;
    if (name === TODO_TOOL) continue;
    const o = callOutcome(e);
    if (o) calls.push(o);
  }
  // The completing batch: the model response that asked for the completing call.
  const callId = done.data.call_id;
  const batch = events.findLast(
    (e, i) => i < at && e.type === "model_responded" && e.data.tool_calls.some((c) => c.id === callId),
  );
  let siblingInFlight = false;
  let batchDenial = false;
  if (batch?.type === "model_responded") {
    const finishedBefore = new Set<string>();
    for (let i = 0; i < at; i++) {
      const e = events[i];
      if (e?.type === "tool_call_finished" || e?.type === "tool_call_abandoned")
        finishedBefore.add(e.data.call_id);
    }
    const siblings = batch.data.tool_calls.filter((c) => c.id !== callId);
    siblingInFlight = siblings.some((c) => !finishedBefore.has(c.id));
    const ids = new Set(siblings.map((c) => c.id));
    batchDenial = events.some(
      (e) =>
        (e.type === "tool_call_finished" || e.type === "tool_call_abandoned") &&
        ids.has(e.data.call_id) &&
        callOutcome(e) === "refused",
    );
  }
  return { calls, siblingInFlight, batchDenial, check };
}

/** What the model reads under its todo result; empty for `landed` and for no finding. */
export function renderFinding(
  step: string,
  finding: StepFinding | null,
  opts: { repeated: boolean; check: EventData<"step_check_ran"> | null },
): string {
  const lines: string[] = [];
  const name = JSON.stringify(step);
  const c = opts.check;
  switch (finding) {
    case "null_step":
      lines.push(`loopgate: step ${name} was marked completed with no tool calls since it went in progress.`);
      break;
    case "ended_on_failure":
      lines.push(`loopgate: the last tool call of step ${name} failed, and nothing after it succeeded.`);
      break;
    case "ended_on_refusal":
      lines.push(
        `loopgate: the last tool call of step ${name} was refused (it did not run): the step was blocked, not botched.`,
      );
      break;
    case "check_failed":
      lines.push(
        `loopgate: the check step ${name} declared (${JSON.stringify(c?.command ?? "")}) ran and did not pass${c?.exit_code !== null && c?.exit_code !== undefined ? ` (exit ${c.exit_code})` : ""}.`,
      );
      break;
    default:
      break;
  }
  if (lines.length > 0)
    lines.push(
      opts.repeated
        ? "This step already got this finding before it was revised; repeating it is unlikely to change the result. Revise the plan or ask instead."
        : "Your call: accept it, revise the step, revise the plan, or ask.",
    );
  if (c && c.status !== "passed" && c.status !== "failed")
    lines.push(
      `loopgate: the check of step ${name} did not run (${c.status}: ${c.detail}); the step is unverified.`,
    );
  return lines.join("\n");
}

/** The plan-step counters of one or more runs, for `loopgate health`. Rates are per-run shares. */
export interface StepHealth {
  runs: number;
  step_completions: number;
  step_measured: number;
  step_nulls: number;
  step_reopens: number;
  /** Runs with a null step, among runs with a measured completion (the denominator); null without one. */
  step_null_rate: number | null;
  step_null_rate_denominator: number;
  /** Runs with a reopen, among runs that completed or reopened a step (the denominator); null without one. */
  step_reopen_rate: number | null;
  step_reopen_rate_denominator: number;
}

/** Counts over each run's events; a run recorded without the plan sensor adds to no denominator. */
export function stepHealth(runs: readonly (readonly LoopgateEvent[])[]): StepHealth {
  let completions = 0;
  let measured = 0;
  let nulls = 0;
  let reopens = 0;
  let runsMeasured = 0;
  let runsWithNull = 0;
  let runsActive = 0;
  let runsWithReopen = 0;
  for (const events of runs) {
    let c = 0;
    let m = 0;
    let n = 0;
    let r = 0;
    for (const e of events) {
      if (e.type === "todo_written") {
        c += e.data.completed.length;
        r += e.data.reopened.length;
      } else if (e.type === "step_appraised" && e.data.measured) {
        m++;
        // A null step is a measured completion with no tool calls behind it, whatever its check said.
        if (e.data.calls === 0) n++;
      }
    }
    completions += c;
    measured += m;
    nulls += n;
    reopens += r;
    if (m > 0) runsMeasured++;
    if (n > 0) runsWithNull++;
    if (c > 0 || r > 0) runsActive++;
    if (r > 0) runsWithReopen++;
  }
  return {
    runs: runs.length,
    step_completions: completions,
    step_measured: measured,
    step_nulls: nulls,
    step_reopens: reopens,
    step_null_rate: runsMeasured > 0 ? runsWithNull / runsMeasured : null,
    step_null_rate_denominator: runsMeasured,
    step_reopen_rate: runsActive > 0 ? runsWithReopen / runsActive : null,
    step_reopen_rate_denominator: runsActive,
  };
}
