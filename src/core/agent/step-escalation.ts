import type { EventData, LoopgateEvent } from "../events/loopgate-event.js";
import { TODO_TOOL } from "./step-appraisal.js";

/**
 * Step escalation: pure rules for when a completed step is worth a second opinion. Two triggers decide
 * whether to ask, never what the answer should be; the answer is one binary (carry on, or revise the plan),
 * and what reaches the model is a fixed template, never the reviewer's words.
 */

/** The most escalations one run may make. */
export const MAX_ESCALATIONS = 5;
/** A span outlier took at least this many times the plan's mean calls… */
export const OUTLIER_FACTOR = 3;
/** …and at least this many calls outright, so a plan of tiny steps cannot escalate on noise. */
export const OUTLIER_MIN_CALLS = 6;

export type EscalationTrigger = EventData<"step_escalated">["trigger"];
export type EscalationDecision = EventData<"step_escalated">["decision"];

/** One tool call of a step's span, as the reviewer reads it. */
export interface SpanToolCall {
  name: string;
  subject: string;
  exit_code: number | null;
}

/** What a trigger reads: the step's words, its span and the plan's mean calls before it. */
export interface EscalationInput {
  step: string;
  expect: string | null;
  check: string | null;
  /** Whether the step's declared check ran (passed or failed): a check did happen. */
  checkRan: boolean;
  calls: number;
  spanCalls: readonly SpanToolCall[];
  /** The mean calls of the measured steps completed before this one; null without one. */
  meanCalls: number | null;
}

/** The template rendered onto the todo result for `revise_plan`; it is the only thing the model reads. */
export const REVISE_PLAN_NUDGE =
  "[loopgate] An independent review suggests revising the plan for the steps ahead before continuing.";

/** A span outlier: at least 3× the plan's mean calls and at least 6 calls. */
export function isSpanOutlier(calls: number, meanCalls: number | null): boolean {
  if (meanCalls === null) return false;
  return calls >= OUTLIER_MIN_CALLS && calls >= OUTLIER_FACTOR * meanCalls;
}

const CLAIM =
  /\b(?:tests?|specs?|suite)\s+(?:all\s+|now\s+|still\s+)?(?:pass(?:es|ing|ed)?|green|succeed(?:s|ed)?)\b|\b(?:builds?|compiles?|type-?checks?|lints?)\s+(?:clean(?:ly)?|pass(?:es|ed)?|succeed(?:s|ed)?|without\s+errors?|fine|ok)\b|\bno\s+(?:type|lint|compile|build)\s+errors\b|\ball\s+green\b/i;

/** Whether a step's own words read as checkable ("tests pass", "builds clean"). */
export function claimsCheckable(words: string): boolean {
  return CLAIM.test(words);
}

const CHECK_COMMAND =
  /\b(?:test|tests|vitest|jest|mocha|ava|pytest|tox|nox|unittest|rspec|phpunit|ctest|tsc|mypy|pyright|eslint|biome|ruff|flake8|pylint|clippy|lint|typecheck|type-check|build|check|verify|make|gradle|mvn|bazel)\b|\bgo\s+(?:test|build|vet)\b|\bcargo\s+(?:test|build|check|clippy)\b|\bnode\s+--test\b/i;

/** Whether a span call looks like a check: a command that runs tests, a build, a type-check or a linter. */
export function looksLikeCheck(call: SpanToolCall): boolean {
  if (call.name !== "bash") return false;
  return CHECK_COMMAND.test(call.subject);
}

/** An unverified claim: the step's words read as checkable, and nothing in its span looks like a check. */
export function isUnverifiedClaim(i: EscalationInput): boolean {
  const words = [i.step, i.expect ?? ""].join("\n");
  if (!claimsCheckable(words)) return false;
  if (i.checkRan) return false;
  return !i.spanCalls.some(looksLikeCheck);
}

/** The trigger that fires for a completed step, if any (an outlier is read first). */
export function escalationTrigger(i: EscalationInput): EscalationTrigger | null {
  if (isSpanOutlier(i.calls, i.meanCalls)) return "span_outlier";
  if (isUnverifiedClaim(i)) return "unverified_claim";
  return null;
}

/** How many escalations the run has made (each recorded `step_escalated`, inconclusive included). */
export function escalationsUsed(events: readonly LoopgateEvent[]): number {
  return events.filter((e) => e.type === "step_escalated").length;
}

/** Whether the run may escalate again. */
export function underCap(events: readonly LoopgateEvent[]): boolean {
  return escalationsUsed(events) < MAX_ESCALATIONS;
}

/** What the model reads for a decision: the fixed nudge for `revise_plan`, nothing otherwise. */
export function renderEscalation(decision: EscalationDecision): string {
  return decision === "revise_plan" ? REVISE_PLAN_NUDGE : "";
}

/**
 * The mean calls of the measured steps appraised before index `at` (the run's events); null without one.
 */
export function meanCallsBefore(events: readonly LoopgateEvent[], at: number): number | null {
  let sum = 0;
  let n = 0;
  for (let i = 0; i < at; i++) {
    const e = events[i];
    if (e?.type === "step_appraised" && e.data.measured) {
      sum += e.data.calls;
      n++;
    }
  }
  return n > 0 ? sum / n : null;
}

/**
 * The tool calls (name, subject, exit code) of the span of step `step` completed by the `todo_written` at
 * index `at`: from the latest earlier write that had it in progress (plan-tool calls left out).
 */
export function spanToolCalls(events: readonly LoopgateEvent[], at: number, step: string): SpanToolCall[] {
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
  if (start < 0) return [];
  const out: SpanToolCall[] = [];
  const names = new Map<string, string>();
  for (const e of events) if (e.type === "tool_call_started") names.set(e.data.call_id, e.data.name);
  for (let i = start + 1; i < at; i++) {
    const e = events[i];
    if (e?.type === "tool_call_finished" && e.data.name !== TODO_TOOL)
      out.push({ name: e.data.name, subject: e.data.subject.slice(0, 500), exit_code: e.data.exit_code });
    else if (e?.type === "tool_call_abandoned") {
      const name = names.get(e.data.call_id) ?? "unknown";
      if (name !== TODO_TOOL) out.push({ name, subject: "(abandoned)", exit_code: null });
    }
  }
  return out;
}

/** The appraised completion of `attempt` to escalate next, with its trigger; null when there is none. */
export function nextEscalation(
  events: readonly LoopgateEvent[],
  attempt: number,
): { input: EscalationInput; trigger: EscalationTrigger; callId: string } | null {
  if (!underCap(events)) return null;
  const escalated = new Set<string>();
  for (const e of events)
    if (e.type === "step_escalated") escalated.add(`${e.data.call_id}\u0000${e.data.step}`);
  for (let i = 0; i < events.length; i++) {
    const e = events[i];
    if (e?.type !== "step_appraised" || e.data.attempt !== attempt) continue;
    if (e.data.finding !== null && e.data.finding !== "landed") continue;
    if (escalated.has(`${e.data.call_id}\u0000${e.data.step}`)) continue;
    const callId = e.data.call_id;
    const at = events.findIndex((x) => x.type === "todo_written" && x.data.call_id === callId);
    const write = events[at];
    if (write?.type !== "todo_written") continue;
    const item = write.data.items.find((x) => x.content === e.data.step);
    const ran = events.some(
      (x) =>
        x.type === "step_check_ran" &&
        x.data.call_id === callId &&
        x.data.step === e.data.step &&
        (x.data.status === "passed" || x.data.status === "failed"),
    );
    const input: EscalationInput = {
      step: e.data.step,
      expect: item?.expect ?? null,
      check: item?.check ?? null,
      checkRan: ran,
      calls: e.data.calls,
      spanCalls: spanToolCalls(events, at, e.data.step),
      meanCalls: meanCallsBefore(events, i),
    };
    const trigger = escalationTrigger(input);
    if (trigger) return { input, trigger, callId };
  }
  return null;
}
