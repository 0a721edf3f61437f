import { boundName, boundText, LIMITS } from "./bounded.js";
import { DomainError } from "./errors.js";
import type { EventData, GateError, LoopgateEvent, RunStatus } from "./events.js";

/** An event as a decider emits it: the caller adds `id` and `meta`. */
export type EventBody = LoopgateEvent extends infer E
  ? E extends LoopgateEvent
    ? Pick<E, "type" | "data">
    : never
  : never;

/** The commands the run decider accepts. */
export type RunCommand =
  | { type: "start_run"; data: EventData<"run_started"> }
  | { type: "start_attempt"; requiredFix: string | null }
  /** The builder's result and, in the same atomic append, what it claimed. */
  | { type: "record_builder"; data: EventData<"builder_finished">; claim?: EventData<"claim_recorded"> }
  /** An observation and, in the same atomic append, its diff against pristine and the findings. */
  | {
      type: "record_observation";
      data: EventData<"workspace_observed">;
      changes?: EventData<"workspace_changed">;
      findings?: EventData<"finding_recorded">[];
    }
  | { type: "record_changes"; data: EventData<"workspace_changed"> }
  | { type: "record_finding"; data: EventData<"finding_recorded"> }
  | { type: "record_claim"; data: EventData<"claim_recorded"> }
  | { type: "record_gate"; data: EventData<"gate_run_finished"> }
  | { type: "finish_attempt" }
  | { type: "issue_required_fix"; text: string }
  | { type: "fail_infrastructure"; reason: string; interrupted?: boolean }
  | { type: "finish_run" }
  /** An event of the built-in agent's loop, appended as is while an attempt is open. */
  | { type: "record_agent"; event: AgentEventBody }
  | { type: "resume"; data: EventData<"run_resumed"> }
  | { type: "record_judge"; data: EventData<"judge_finished"> }
  /** A fact an external agent's runtime reported through loopgate's hooks; any time before the verdict. */
  | { type: "record_agent_runtime"; event: AgentRuntimeEventBody };

/** What an external agent's runtime reports through loopgate's hooks (origin agent_runtime, hook failures runtime). */
export const agentRuntimeEventTypes = [
  "agent_tool_observed",
  "agent_session_finished",
  "hook_failed",
] as const;
export type AgentRuntimeEventBody = Extract<EventBody, { type: (typeof agentRuntimeEventTypes)[number] }>;

/** The agent loop's event types: recorded inside an attempt, folded by the agent's own projection. */
export const agentEventTypes = [
  "goal_set",
  "model_responded",
  "model_failed",
  "tool_call_started",
  "tool_call_finished",
  "tool_call_abandoned",
  "workspace_touched",
  "goal_probed",
  "goal_evaluated",
  "continuation_queued",
  "budget_exhausted",
  "self_check_plan_recorded",
  "self_check_recorded",
  "repair_decided",
  "todo_written",
  "step_check_ran",
  "step_appraised",
  "step_escalated",
] as const;
export type AgentEventBody = Extract<EventBody, { type: (typeof agentEventTypes)[number] }>;

/** What one gate run decided, as the verdict needs it. */
export interface GateOutcome {
  passed: boolean;
  error: GateError | null;
  exitCode: number | null;
}

/** One attempt as folded from its events. */
export interface AttemptState {
  closed: boolean;
  /** Set when the attempt's builder was killed at its timeout: after how many ms. */
  builderTimedOutMs?: number;
}

/** The run as folded from its events. Derived facts (status) are computed by `verdict`, never stored. */
export interface RunState {
  started: boolean;
  taskId: string;
  maxAttempts: number;
  gateIds: string[];
  attempts: AttemptState[];
  /** Gate outcomes by attempt number, then gate id. Kept by number even if a log holds them out of order. */
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

const current = (s: RunState): AttemptState | undefined => s.attempts[s.attempts.length - 1];

/** Folds one event into the state. Total: it never throws, so any stored log can be read back. */
export function evolve(state: RunState, event: EventBody): RunState {
  switch (event.type) {
    case "run_started":
      return {
        ...state,
        started: true,
        taskId: event.data.task_id,
        maxAttempts: event.data.max_attempts,
        gateIds: event.data.gates.map((g) => g.id),
        judgeRequired: event.data.judge !== undefined,
      };
    case "attempt_started":
      return { ...state, attempts: [...state.attempts, { closed: false }] };
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
      if (!a || !event.data.timed_out) return state;
      return replaceAttempt(state, event.data.attempt, { ...a, builderTimedOutMs: event.data.duration_ms });
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
    case "workspace_touched":
    case "goal_probed":
    case "continuation_queued":
    case "workspace_observed":
    case "workspace_changed":
    case "claim_recorded":
    case "required_fix_issued":
    case "self_check_plan_recorded":
    case "self_check_recorded":
    case "repair_decided":
    case "todo_written":
    case "step_check_ran":
    case "step_appraised":
    case "step_escalated":
    case "run_lease_taken": // who drives the run, not what it did: see run-lease.ts
    case "run_lease_renewed":
    case "task_checked": // lives in a task's own stream, never in a run's
    case "agent_tool_observed": // agent_runtime facts: evidence for goals and steps, never for the verdict
    case "agent_session_finished":
    case "hook_failed":
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

/** Decides which events a command produces in the given state; refuses out-of-order commands. */
export function decide(command: RunCommand, state: RunState): EventBody[] {
  if (command.type === "start_run") {
    if (state.started) throw new DomainError("the run has already started");
    return [{ type: "run_started", data: command.data }];
  }
  if (!state.started) throw new DomainError(`${command.type}: the run has not started`);
  if (command.type === "resume" && command.data.reopened === true) {
    if (!state.interrupted) throw new DomainError("resume: only a run that was interrupted can be reopened");
    return [{ type: "run_resumed", data: command.data }];
  }
  if (state.finished)
    throw new DomainError(`${command.type}: the run has finished (${state.finished.status})`);
  const open = current(state);
  const n = state.attempts.length;
  const needOpen = (attempt: number) => {
    if (!open || open.closed) throw new DomainError(`${command.type}: no attempt is open`);
    if (attempt !== n)
      throw new DomainError(`${command.type}: attempt ${attempt} is not the open attempt ${n}`);
  };
  switch (command.type) {
    case "start_attempt":
      if (state.infrastructure) throw new DomainError("start_attempt: the run hit an infrastructure failure");
      if (open && !open.closed) throw new DomainError(`start_attempt: attempt ${n} is still open`);
      if (n >= state.maxAttempts)
        throw new DomainError(`start_attempt: the attempt cap (${state.maxAttempts}) is reached`);
      return [
        {
          type: "attempt_started",
          data: {
            attempt: n + 1,
            required_fix:
              command.requiredFix === null ? null : boundText(command.requiredFix, LIMITS.requiredFix),
          },
        },
      ];
    case "record_builder":
      needOpen(command.data.attempt);
      return [
        { type: "builder_finished", data: command.data },
        ...(command.claim ? [{ type: "claim_recorded" as const, data: command.claim }] : []),
      ];
    case "record_observation":
      if (command.data.attempt !== 0) needOpen(command.data.attempt);
      return [
        { type: "workspace_observed", data: command.data },
        ...(command.changes ? [{ type: "workspace_changed" as const, data: command.changes }] : []),
        ...(command.findings ?? []).map((f) => ({ type: "finding_recorded" as const, data: f })),
      ];
    case "record_changes":
      needOpen(command.data.attempt);
      return [{ type: "workspace_changed", data: command.data }];
    case "record_finding":
      needOpen(command.data.attempt);
      return [{ type: "finding_recorded", data: command.data }];
    case "record_claim":
      needOpen(command.data.attempt);
      return [{ type: "claim_recorded", data: command.data }];
    case "record_gate":
      needOpen(command.data.attempt);
      if (!state.gateIds.includes(command.data.gate_id))
        throw new DomainError(`record_gate: gate ${command.data.gate_id} is not declared by the task`);
      return [{ type: "gate_run_finished", data: command.data }];
    case "finish_attempt":
      needOpen(n);
      return [{ type: "attempt_finished", data: { attempt: n, passed: attemptPassed(state, n) } }];
    case "issue_required_fix":
      if (!open?.closed) throw new DomainError("issue_required_fix: the attempt has not finished");
      if (attemptPassed(state, n)) throw new DomainError("issue_required_fix: the attempt passed");
      return [
        {
          type: "required_fix_issued",
          data: { attempt: n, text: boundText(command.text, LIMITS.requiredFix) },
        },
      ];
    case "record_agent":
      needOpen(command.event.data.attempt);
      return [command.event];
    case "resume":
      return [{ type: "run_resumed", data: command.data }];
    case "record_agent_runtime":
      if (command.event.data.attempt > n)
        throw new DomainError(`${command.event.type}: attempt ${command.event.data.attempt} has not started`);
      return [command.event];
    case "record_judge":
      needOpen(command.data.attempt);
      if (!state.judgeRequired) throw new DomainError("record_judge: the task has no judge");
      if (!gatesPassed(state, command.data.attempt))
        throw new DomainError("record_judge: the judge is consulted only after every gate passed");
      return [{ type: "judge_finished", data: command.data }];
    case "fail_infrastructure":
      return [
        {
          type: "infrastructure_failed",
          data: {
            attempt: n,
            reason: boundText(command.reason, LIMITS.reason) || "infrastructure failure (no reason given)",
            ...(command.interrupted ? { interrupted: true } : {}),
          },
        },
      ];
    case "finish_run": {
      if (open && !open.closed && !state.infrastructure)
        throw new DomainError(`finish_run: attempt ${n} is still open`);
      return [{ type: "run_finished", data: verdict(state) }];
    }
    default: {
      const never: never = command;
      return never;
    }
  }
}

/** Folds a whole event list. */
export function foldRun(events: readonly EventBody[]): RunState {
  return events.reduce(evolve, initialState());
}
