import {
  type EventBody as AnyBody,
  type RunStreamEventBody as Body,
  type GateError,
  type RunStatus,
  runStreamOf,
} from "../events/loopgate-event.js";
import { boundName, boundText, LIMITS } from "../kernel/bounded.js";

/** What one gate run decided, as the verdict needs it. */
export interface GateOutcome {
  passed: boolean;
  error: GateError | null;
  exitCode: number | null;
}

/** One attempt as folded from its events: the facts `nextRunStep` decides from. */
export interface AttemptState {
  /** 1-based. */
  number: number;
  /** The required fix the attempt started with (null on attempt 1). */
  requiredFix: string | null;
  builderFinished: boolean;
  /** Set when the attempt's builder was killed at its timeout: after how many ms. */
  builderTimedOutMs?: number;
  /** The observation of the workspace after the builder; its gates run on it. */
  afterObservationId: string | null;
  closed: boolean;
  /** The required fix issued for the next attempt after this one closed without passing. */
  fixIssued: string | null;
}

/** The run as folded from its events. Derived facts (status) are computed by `verdict`, never stored. */
export interface RunState {
  started: boolean;
  taskId: string;
  /** run_started's builder kind; `workspace` (loopgate verify) runs no builder. */
  builderKind: string;
  /** The pristine observation every attempt's gate environment is built from; null until prepared. */
  pristineObservationId: string | null;
  /** The last observation recorded (pristine, after a builder, or after an agent's tool call). */
  lastObservationId: string | null;
  maxAttempts: number;
  gateIds: string[];
  attempts: AttemptState[];
  /** Gate outcomes (the gates run) by attempt number, then gate id. Kept by number even if a log holds them out of order. */
  gateRuns: Map<number, Map<string, GateOutcome[]>>;
  /** Blocking findings by attempt number. */
  blocking: Map<number, string[]>;
  infrastructure: string | null;
  /** The infrastructure failure is the user's interrupt: a resume may reopen the run. */
  interrupted: boolean;
  /** The first budget cap that stopped the run, named. */
  capReached: string | null;
  /** Whether the task has a judge, whose approval every passing attempt then also needs. */
  judgeRequired: boolean;
  /** The judge's verdicts by attempt number (the last one counts). */
  judgeVerdicts: Map<number, { verdict: string; reason: string }>;
  finished: { status: RunStatus; reason: string } | null;
}

/** The state before any event. */
export function initialState(): RunState {
  return {
    started: false,
    taskId: "",
    builderKind: "",
    pristineObservationId: null,
    lastObservationId: null,
    maxAttempts: 0,
    gateIds: [],
    attempts: [],
    gateRuns: new Map(),
    blocking: new Map(),
    infrastructure: null,
    interrupted: false,
    capReached: null,
    judgeRequired: false,
    judgeVerdicts: new Map(),
    finished: null,
  };
}

/** The latest attempt, open or closed; undefined before the first. */
export const currentAttempt = (s: RunState): AttemptState | undefined => s.attempts[s.attempts.length - 1];

/** Folds one event into the state. Total: it never throws, so any stored log can be read back. */
export function evolve(state: RunState, event: Body): RunState {
  switch (event.type) {
    case "run_started":
      return {
        ...state,
        started: true,
        taskId: event.data.task_id,
        builderKind: event.data.builder.kind,
        maxAttempts: event.data.max_attempts,
        gateIds: event.data.gates.map((g) => g.id),
        judgeRequired: event.data.judge !== undefined,
      };
    case "attempt_started": {
      const a: AttemptState = {
        number: state.attempts.length + 1,
        requiredFix: event.data.required_fix,
        builderFinished: false,
        afterObservationId: null,
        closed: false,
        fixIssued: null,
      };
      return { ...state, attempts: [...state.attempts, a] };
    }
    case "workspace_observed": {
      const seen = { ...state, lastObservationId: event.data.observation_id };
      if (event.data.phase === "pristine")
        return { ...seen, pristineObservationId: state.pristineObservationId ?? event.data.observation_id };
      const a = state.attempts[event.data.attempt - 1];
      return a
        ? replaceAttempt(seen, event.data.attempt, { ...a, afterObservationId: event.data.observation_id })
        : seen;
    }
    case "workspace_touched":
      return { ...state, lastObservationId: event.data.observation_id };
    case "required_fix_issued": {
      const a = state.attempts[event.data.attempt - 1];
      return a ? replaceAttempt(state, event.data.attempt, { ...a, fixIssued: event.data.text }) : state;
    }
    case "gate_run_finished": {
      const outcome = { passed: event.data.passed, error: event.data.error, exitCode: event.data.exit_code };
      const gates = new Map(state.gateRuns.get(event.data.attempt));
      gates.set(event.data.gate_id, [...(gates.get(event.data.gate_id) ?? []), outcome]);
      const gateRuns = new Map(state.gateRuns);
      gateRuns.set(event.data.attempt, gates);
      return { ...state, gateRuns };
    }
    case "finding_recorded": {
      if (event.data.severity !== "blocking") return state;
      // Kept by attempt number even if it arrives out of order: a blocking fact is never dropped.
      const label = event.data.path ? `${event.data.code} (${boundName(event.data.path)})` : event.data.code;
      const blocking = new Map(state.blocking);
      blocking.set(event.data.attempt, [...(blocking.get(event.data.attempt) ?? []), label]);
      return { ...state, blocking };
    }
    case "builder_finished": {
      const a = state.attempts[event.data.attempt - 1];
      if (!a) return state;
      return replaceAttempt(state, event.data.attempt, {
        ...a,
        builderFinished: true,
        ...(event.data.timed_out ? { builderTimedOutMs: event.data.duration_ms } : {}),
      });
    }
    case "attempt_finished": {
      const a = state.attempts[event.data.attempt - 1];
      return a ? replaceAttempt(state, event.data.attempt, { ...a, closed: true }) : state;
    }
    case "infrastructure_failed":
      if (state.infrastructure !== null) return state;
      return { ...state, infrastructure: event.data.reason, interrupted: event.data.interrupted === true };
    case "run_finished":
      return { ...state, finished: { status: event.data.status, reason: event.data.reason } };
    case "budget_exhausted":
      return {
        ...state,
        capReached:
          state.capReached ??
          `budget cap ${event.data.cap} reached (${event.data.used} of ${event.data.limit})`,
      };
    case "goal_evaluated": {
      if (event.data.outcome !== "blocked") return state;
      const blocking = new Map(state.blocking);
      const label = `goal_blocked (${boundName(event.data.reason)})`;
      blocking.set(event.data.attempt, [...(blocking.get(event.data.attempt) ?? []), label]);
      return { ...state, blocking };
    }
    case "judge_finished": {
      const judgeVerdicts = new Map(state.judgeVerdicts);
      judgeVerdicts.set(event.data.attempt, { verdict: event.data.verdict, reason: event.data.reason });
      return { ...state, judgeVerdicts };
    }
    case "run_resumed":
      // Reopening an interrupted run: the interruption was not a verdict, so it stops counting.
      if (event.data.reopened !== true || !state.interrupted) return state;
      return { ...state, finished: null, infrastructure: null, interrupted: false };
    case "goal_set":
    case "model_responded":
    case "model_failed":
    case "tool_call_started":
    case "tool_call_finished":
    case "tool_call_abandoned":
    case "goal_probed":
    case "continuation_queued":
    case "workspace_changed":
    case "claim_recorded":
    case "self_check_plan_recorded":
    case "self_check_recorded":
    case "repair_decided":
    case "todo_written":
    case "step_check_ran":
    case "step_appraised":
    case "step_escalated":
    case "run_lease_taken": // who drives the run, not what it did: see run-lease.ts
    case "run_lease_renewed":
    case "agent_tool_observed": // agent_runtime facts: evidence for goals and steps, never for the verdict
    case "agent_session_finished":
    case "agent_step_appraised":
    case "agent_goal_evaluated":
    case "hook_failed":
    case "stop_hook_answered":
      return state;
    default: {
      const never: never = event;
      return never;
    }
  }
}

function replaceAttempt(state: RunState, n: number, a: AttemptState): RunState {
  const attempts = state.attempts.slice();
  attempts[n - 1] = a;
  return { ...state, attempts };
}

/**
 * True when every declared gate ran on attempt `n`, every run of it passed, nothing blocking was found,
 * and, if the task has a judge, the judge approved that attempt. The judge can only veto.
 */
export function attemptPassed(state: RunState, n: number): boolean {
  if (!gatesPassed(state, n)) return false;
  return !state.judgeRequired || state.judgeVerdicts.get(n)?.verdict === "approve";
}

/** The gate-and-findings half of `attemptPassed`: what must hold before a judge is even consulted. */
export function gatesPassed(state: RunState, n: number): boolean {
  const a = state.attempts[n - 1];
  if (!a || state.gateIds.length === 0 || (state.blocking.get(n)?.length ?? 0) > 0) return false;
  const gates = state.gateRuns.get(n);
  return state.gateIds.every((id) => {
    const runs = gates?.get(id);
    return runs !== undefined && runs.length > 0 && runs.every((r) => r.passed);
  });
}

/** Why attempt `n` did not pass, in one line. */
export function attemptFailureReason(state: RunState, n: number): string {
  const a = state.attempts[n - 1];
  if (!a) return `attempt ${n} never ran`;
  const parts: string[] = [];
  if (a.builderTimedOutMs !== undefined)
    parts.push(
      `the builder timed out after ${Math.round(a.builderTimedOutMs / 1000)} s (builder.timeout in the task)`,
    );
  for (const id of state.gateIds) {
    const runs = state.gateRuns.get(n)?.get(id);
    if (!runs || runs.length === 0) parts.push(`gate ${id} did not run`);
    else {
      const bad = runs.find((r) => !r.passed);
      if (bad)
        parts.push(
          `gate ${id} failed${bad.error ? ` (${bad.error})` : bad.exitCode !== null ? ` (exit ${bad.exitCode})` : ""}`,
        );
    }
  }
  const blocking = state.blocking.get(n) ?? [];
  if (blocking.length)
    parts.push(
      `blocking findings: ${blocking.slice(0, 5).join(", ")}${blocking.length > 5 ? ` and ${blocking.length - 5} more` : ""}`,
    );
  if (state.judgeRequired && parts.length === 0) {
    const j = state.judgeVerdicts.get(n);
    parts.push(
      j
        ? `judge ${j.verdict === "reject" ? "rejected" : j.verdict}: ${boundText(j.reason, 1000)}`
        : "the judge did not approve",
    );
  }
  return parts.join("; ") || "no gate passed";
}

/** The derived verdict: SUCCESS only when the final attempt's own gate runs all passed. Its reason is bounded. */
export function verdict(state: RunState): { status: RunStatus; reason: string } {
  const v = unboundedVerdict(state);
  return { status: v.status, reason: boundText(v.reason, LIMITS.reason) };
}

function unboundedVerdict(state: RunState): { status: RunStatus; reason: string } {
  if (state.infrastructure !== null) return { status: "TOOL_FAILURE", reason: state.infrastructure };
  if (state.capReached !== null) return { status: "ESCALATED", reason: state.capReached };
  const n = state.attempts.length;
  if (n === 0) return { status: "ESCALATED", reason: "no attempt ran" };
  if (attemptPassed(state, n))
    return { status: "SUCCESS", reason: `all ${state.gateIds.length} gates passed on attempt ${n}` };
  const why = attemptFailureReason(state, n);
  if (n >= state.maxAttempts)
    return {
      status: "ESCALATED",
      reason: `attempt cap reached (${n} of ${state.maxAttempts}); attempt ${n}: ${why}`,
    };
  return {
    status: "ESCALATED",
    reason: `stopped after attempt ${n} of ${state.maxAttempts}; attempt ${n}: ${why}`,
  };
}

/**
 * Folds a run stream's events. They are checked to be a run stream's first: an event of another kind
 * of stream is corruption (CorruptEventError), never skipped.
 */
export function foldRun(events: readonly AnyBody[]): RunState {
  return runStreamOf(events).reduce<RunState>((s, e) => evolve(s, e as Body), initialState());
}
