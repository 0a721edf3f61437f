import type {
  AgentEventBody,
  AgentRuntimeEventBody,
  RunStreamEventBody as EventBody,
  EventData,
} from "../events/loopgate-event.js";
import { boundText, LIMITS } from "../kernel/bounded.js";
import type { Decider } from "../kernel/decider.js";
import { DomainError } from "../kernel/errors.js";
import {
  attemptPassed,
  currentAttempt,
  evolve,
  gatesPassed,
  initialState,
  type RunState,
  verdict,
} from "./run-state.js";

// Declared in events.ts; re-exported while callers still import them from here.
export {
  type AgentEventBody,
  type AgentRuntimeEventBody,
  agentEventTypes,
  agentRuntimeEventTypes,
  type EventBody,
} from "../events/loopgate-event.js";

/** The commands the run decider accepts. */
export type RunCommand =
  | { type: "start_run"; data: EventData<"run_started"> }
  | { type: "start_attempt"; requiredFix: string | null }
  /** The builder's result and, in the same atomic append, what it claimed and what it was found to do. */
  | {
      type: "record_builder";
      data: EventData<"builder_finished">;
      claim?: EventData<"claim_recorded">;
      findings?: EventData<"finding_recorded">[];
      /** The builder could not be carried out: the TOOL_FAILURE goes into the same append. */
      infrastructure?: string;
    }
  /** An observation and, in the same atomic append, its diff against pristine and the findings. */
  | {
      type: "record_observation";
      data: EventData<"workspace_observed">;
      changes?: EventData<"workspace_changed">;
      findings?: EventData<"finding_recorded">[];
      /** What the observation showed stops the run (a builder that never started): in the same append. */
      infrastructure?: string;
    }
  | { type: "record_changes"; data: EventData<"workspace_changed"> }
  | { type: "record_finding"; data: EventData<"finding_recorded"> }
  | { type: "record_claim"; data: EventData<"claim_recorded"> }
  /** A gate's result; `infrastructure` when its environment failed, recorded in the same append. */
  | { type: "record_gate"; data: EventData<"gate_run_finished">; infrastructure?: string }
  /** Closes the open attempt; `findings` (e.g. why it could not be observed) go in the same append, first. */
  | { type: "finish_attempt"; findings?: EventData<"finding_recorded">[] }
  | { type: "issue_required_fix"; text: string }
  | { type: "fail_infrastructure"; reason: string; interrupted?: boolean }
  | { type: "finish_run" }
  /**
   * An event of the built-in agent's loop, appended as is while an attempt is open; `more` are appended
   * with it in the same append (a mutating call's result and the observation of what it changed).
   */
  | { type: "record_agent"; event: AgentEventBody; more?: readonly AgentEventBody[] }
  | { type: "resume"; data: EventData<"run_resumed"> }
  | { type: "record_judge"; data: EventData<"judge_finished"> }
  /** A fact an external agent's runtime reported through loopgate's hooks; any time before the verdict. */
  | { type: "record_agent_runtime"; event: AgentRuntimeEventBody };

/** The infrastructure failure of attempt `n`, when there is one. */
function failure(n: number, reason: string | undefined, interrupted?: boolean): EventBody[] {
  if (reason === undefined) return [];
  return [
    {
      type: "infrastructure_failed",
      data: {
        attempt: n,
        reason: boundText(reason, LIMITS.reason) || "infrastructure failure (no reason given)",
        ...(interrupted ? { interrupted: true } : {}),
      },
    },
  ];
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
  const open = currentAttempt(state);
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
        ...(command.findings ?? []).map((f) => {
          if (f.attempt !== n)
            throw new DomainError(`record_builder: a finding of attempt ${f.attempt} in attempt ${n}`);
          return { type: "finding_recorded" as const, data: f };
        }),
        ...failure(n, command.infrastructure),
      ];
    case "record_observation":
      if (command.data.attempt !== 0) needOpen(command.data.attempt);
      return [
        { type: "workspace_observed", data: command.data },
        ...(command.changes ? [{ type: "workspace_changed" as const, data: command.changes }] : []),
        ...(command.findings ?? []).map((f) => ({ type: "finding_recorded" as const, data: f })),
        ...failure(n, command.infrastructure),
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
      return [{ type: "gate_run_finished", data: command.data }, ...failure(n, command.infrastructure)];
    case "finish_attempt": {
      needOpen(n);
      const findings = command.findings ?? [];
      for (const f of findings)
        if (f.attempt !== n)
          throw new DomainError(`finish_attempt: a finding of attempt ${f.attempt} in attempt ${n}`);
      const blocked = findings.some((f) => f.severity === "blocking");
      return [
        ...findings.map((f) => ({ type: "finding_recorded" as const, data: f })),
        { type: "attempt_finished", data: { attempt: n, passed: !blocked && attemptPassed(state, n) } },
      ];
    }
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
      for (const e of command.more ?? []) needOpen(e.data.attempt);
      return [command.event, ...(command.more ?? [])];
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
      return failure(n, command.reason, command.interrupted);
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

export {
  type AttemptState,
  attemptFailureReason,
  attemptPassed,
  evolve,
  foldRun,
  type GateOutcome,
  gatesPassed,
  initialState,
  type RunState,
  verdict,
} from "./run-state.js";

/** The run decider: one stream per run; the runner's RunJournal is its only writer. */
export const runDecider: Decider<RunState, RunCommand, EventBody> = { initialState, evolve, decide };
