import type { EventData, EventOf } from "../events/loopgate-event.js";
import { TODO_TOOL } from "./step-appraisal.js";
import {
  type EscalationInput,
  type EscalationTrigger,
  escalationTrigger,
  MAX_ESCALATIONS,
  type SpanToolCall,
} from "./step-escalation.js";

/**
 * The plan-step part of the agent's state (see agent-decider.ts): completions waiting for their check
 * and appraisal, and appraised steps that trip an escalation trigger, folded from the run's events so the
 * decider never scans the log. Counters that cap a run (checks, escalations) span every attempt.
 */

/** A plan step completed by a todo write and not yet appraised. */
interface Completion {
  callId: string;
  step: string;
  command: string | null;
  /** Index of its todo_written among the run's events. */
  at: number;
}

/** A declared check's outcome, as the appraisal reads it. */
export type CheckFact = EventData<"step_check_ran">;

/** An appraised step that trips an escalation trigger and has not been escalated. */
interface Candidate {
  callId: string;
  step: string;
  trigger: EscalationTrigger;
  input: EscalationInput;
}

const key = (callId: string, step: string) => `${callId}\u0000${step}`;

export interface StepWorkState {
  completions: readonly Completion[];
  checks: Readonly<Record<string, CheckFact>>;
  checksDispatched: number;
  candidates: readonly Candidate[];
  escalated: readonly string[];
  escalationsUsed: number;
  /** Run-wide: the measured appraisals so far (for the mean calls an outlier is measured against). */
  measured: { sum: number; n: number };
  /** Spans of steps in progress: tool calls since the write that put each in progress. */
  spans: Readonly<Record<string, readonly SpanToolCall[]>>;
  completedSpans: Readonly<Record<string, readonly SpanToolCall[]>>;
  /** The first todo write of each call id: its items, for an escalation's input. */
  writes: Readonly<Record<string, EventData<"todo_written">["items"]>>;
  /** Names of started calls without a result (an abandoned call's span entry needs it). */
  open: Readonly<Record<string, string>>;
}

export function initialStepWork(): StepWorkState {
  return {
    completions: [],
    checks: {},
    checksDispatched: 0,
    candidates: [],
    escalated: [],
    escalationsUsed: 0,
    measured: { sum: 0, n: 0 },
    spans: {},
    completedSpans: {},
    writes: {},
    open: {},
  };
}

/** The event types the plan-step state reads. */
export const stepEventTypes = [
  "tool_call_started",
  "tool_call_finished",
  "tool_call_abandoned",
  "todo_written",
  "step_check_ran",
  "step_appraised",
  "step_escalated",
] as const;
export type StepEvent = EventOf<(typeof stepEventTypes)[number]>;

/** The action types this part decides (a subset of AgentAction). */
export type StepAction =
  /** Run a completed step's declared check (or record why it did not run: `skipped`). */
  | {
      kind: "run_step_check";
      callId: string;
      step: string;
      command: string;
      checkId: string;
      skipped: string | null;
    }
  | { kind: "appraise_step"; callId: string; step: string; at: number; check: CheckFact | null }
  | {
      kind: "escalate_step";
      callId: string;
      step: string;
      trigger: EscalationTrigger;
      input: EscalationInput;
      used: number;
    };

function addToSpans(s: StepWorkState, call: SpanToolCall): StepWorkState["spans"] {
  if (call.name === TODO_TOOL) return s.spans;
  return Object.fromEntries(Object.entries(s.spans).map(([step, calls]) => [step, [...calls, call]]));
}

/**
 * Folds one step event. `index` is its place in the run's log; `mine` says whether it belongs to the
 * attempt this state decides for (only its completions and candidates are kept).
 */
export function evolveStepWork(
  s: StepWorkState,
  e: StepEvent,
  index: number,
  mine: (attempt: number) => boolean,
): StepWorkState {
  switch (e.type) {
    case "tool_call_started":
      return { ...s, open: { ...s.open, [e.data.call_id]: e.data.name } };
    case "tool_call_finished": {
      const { [e.data.call_id]: _, ...open } = s.open;
      const call = { name: e.data.name, subject: e.data.subject.slice(0, 500), exit_code: e.data.exit_code };
      return { ...s, open, spans: addToSpans(s, call) };
    }
    case "tool_call_abandoned": {
      const { [e.data.call_id]: name = "unknown", ...open } = s.open;
      return { ...s, open, spans: addToSpans(s, { name, subject: "(abandoned)", exit_code: null }) };
    }
    case "todo_written": {
      const spans: Record<string, readonly SpanToolCall[]> = { ...s.spans };
      const completedSpans: Record<string, readonly SpanToolCall[]> = { ...s.completedSpans };
      for (const item of e.data.items)
        if (item.status === "in_progress") spans[item.content] = [];
        else if (item.status === "completed") {
          completedSpans[key(e.data.call_id, item.content)] = spans[item.content] ?? [];
          delete spans[item.content];
        }
      const writes = e.data.call_id in s.writes ? s.writes : { ...s.writes, [e.data.call_id]: e.data.items };
      const ours = mine(e.data.attempt);
      const items = new Map(e.data.items.map((x) => [x.content, x]));
      const completions = ours
        ? [
            ...s.completions,
            ...e.data.completed.map((step) => ({
              callId: e.data.call_id,
              step,
              command: items.get(step)?.check ?? null,
              at: index,
            })),
          ]
        : s.completions;
      return { ...s, spans, completedSpans, writes, completions };
    }
    case "step_check_ran":
      return {
        ...s,
        checksDispatched: s.checksDispatched + (e.data.status === "skipped" ? 0 : 1),
        checks: {
          ...s.checks,
          [key(e.data.call_id, e.data.step)]: e.data,
        },
      };
    case "step_appraised": {
      const k = key(e.data.call_id, e.data.step);
      const measured = e.data.measured
        ? { sum: s.measured.sum + e.data.calls, n: s.measured.n + 1 }
        : s.measured;
      const completions = s.completions.filter((c) => key(c.callId, c.step) !== k);
      const candidate =
        mine(e.data.attempt) && (e.data.finding === null || e.data.finding === "landed")
          ? candidateFor(s, e.data)
          : null;
      return {
        ...s,
        measured,
        completions,
        candidates: candidate ? [...s.candidates, candidate] : s.candidates,
      };
    }
    case "step_escalated": {
      const k = key(e.data.call_id, e.data.step);
      return {
        ...s,
        escalationsUsed: s.escalationsUsed + 1,
        escalated: [...s.escalated, k],
        candidates: s.candidates.filter((c) => key(c.callId, c.step) !== k),
      };
    }
    default:
      return unreachable(e);
  }
}

function unreachable(e: never): never {
  throw new Error(`unhandled step event ${JSON.stringify((e as { type?: unknown }).type)}`);
}

/** The escalation input of an appraised step, as step-escalation.ts `nextEscalation` reads it from the log. */
function candidateFor(s: StepWorkState, a: EventData<"step_appraised">): Candidate | null {
  const k = key(a.call_id, a.step);
  if (s.escalated.includes(k)) return null;
  const items = s.writes[a.call_id];
  if (!items) return null;
  const item = items.find((x) => x.content === a.step);
  const check = s.checks[k];
  const input: EscalationInput = {
    step: a.step,
    expect: item?.expect ?? null,
    check: item?.check ?? null,
    checkRan: check?.status === "passed" || check?.status === "failed",
    calls: a.calls,
    spanCalls: s.completedSpans[k] ?? [],
    meanCalls: s.measured.n > 0 ? s.measured.sum / s.measured.n : null,
  };
  const trigger = escalationTrigger(input);
  return trigger ? { callId: a.call_id, step: a.step, trigger, input } : null;
}

/** The next plan-step action: a check, then an appraisal, per completion in order; then an escalation. */
export function nextStepWork(
  s: StepWorkState,
  c: { stepChecks: { enabled: boolean; max: number }; escalation: boolean },
): StepAction | null {
  const next = s.completions[0];
  if (next) {
    const check = s.checks[key(next.callId, next.step)] ?? null;
    if (next.command !== null && !check) {
      const max = c.stepChecks.max;
      const skipped = !c.stepChecks.enabled
        ? "step checks are disabled for this run"
        : s.checksDispatched >= max
          ? `the limit of ${max} step checks per run is reached`
          : null;
      return {
        kind: "run_step_check",
        callId: next.callId,
        step: next.step,
        command: next.command,
        checkId: `${next.callId}:check:${s.checksDispatched + 1}`,
        skipped,
      };
    }
    return { kind: "appraise_step", callId: next.callId, step: next.step, at: next.at, check };
  }
  const candidate = s.candidates[0];
  if (c.escalation && candidate && s.escalationsUsed < MAX_ESCALATIONS)
    return {
      kind: "escalate_step",
      callId: candidate.callId,
      step: candidate.step,
      trigger: candidate.trigger,
      input: candidate.input,
      used: s.escalationsUsed,
    };
  return null;
}
