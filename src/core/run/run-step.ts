import { DomainError } from "../kernel/errors.js";
import { attemptPassed, currentAttempt, gatesPassed, type RunState } from "./run-state.js";

/** Where the required fix of the next attempt comes from. */
export type FixSource =
  /** Attempt 1: no fix. */
  | { source: "none" }
  /** Already issued (recorded after the previous attempt closed): start with it as is. */
  | { source: "issued"; text: string }
  /** To be written from the previous attempt's failed gates and blocking findings. */
  | { source: "gates"; attempt: number }
  /** To be written from the judge's rejection of the previous attempt (its gates all passed). */
  | { source: "judge"; attempt: number };

/** The one thing a run does next, decided from its log alone. */
export type RunStep =
  /** Copy the pristine and the run workspace and record the pristine observation. */
  | { kind: "prepare" }
  | { kind: "start_attempt"; attempt: number; fix: FixSource }
  | { kind: "run_builder"; attempt: number; requiredFix: string | null }
  | { kind: "observe"; attempt: number }
  | { kind: "run_gate"; attempt: number; gateId: string; index: number; afterObservationId: string }
  | { kind: "consult_judge"; attempt: number; afterObservationId: string }
  | { kind: "finish_attempt"; attempt: number }
  | { kind: "finish_run" };

/** What the run's step needs of its task beyond the log: its gates, in the order they run. */
export interface StepTask {
  gates: readonly string[];
}

/**
 * The run's next step. Pure: the same state gives the same step, so a resumed run (its log folded
 * again) carries on exactly where the crashed one stood. Rules, first match wins:
 * finished, or an infrastructure failure → finish_run; a budget cap → close the open attempt, then
 * finish_run; not prepared → prepare; no open attempt → finish_run if the last attempt passed or the
 * attempt cap is reached, otherwise start_attempt (its fix: none, issued, from the judge or from the
 * gates); in the open attempt: run_builder (unless the work came from a folder), observe, each gate not
 * yet run in task order, the judge once every gate passed (when the task has one), finish_attempt.
 */
export function nextRunStep(state: RunState, task: StepTask): RunStep {
  if (!state.started) throw new DomainError("nextRunStep: the run has not started");
  if (state.finished || state.infrastructure !== null) return { kind: "finish_run" };
  const last = currentAttempt(state);
  const open = last && !last.closed ? last : undefined;
  if (state.capReached !== null)
    return open ? { kind: "finish_attempt", attempt: open.number } : { kind: "finish_run" };
  if (state.pristineObservationId === null) return { kind: "prepare" };
  if (!open) {
    const n = state.attempts.length;
    if (n > 0 && attemptPassed(state, n)) return { kind: "finish_run" };
    if (n >= state.maxAttempts) return { kind: "finish_run" };
    return { kind: "start_attempt", attempt: n + 1, fix: fixSource(state, n) };
  }
  const n = open.number;
  if (!open.builderFinished && state.builderKind !== "workspace")
    return { kind: "run_builder", attempt: n, requiredFix: open.requiredFix };
  const after = open.afterObservationId;
  if (after === null) return { kind: "observe", attempt: n };
  const ran = state.gateRuns.get(n);
  const index = task.gates.findIndex((id) => !ran?.has(id));
  const gateId = task.gates[index];
  if (gateId !== undefined) return { kind: "run_gate", attempt: n, gateId, index, afterObservationId: after };
  if (state.judgeRequired && gatesPassed(state, n) && !state.judgeVerdicts.has(n))
    return { kind: "consult_judge", attempt: n, afterObservationId: after };
  return { kind: "finish_attempt", attempt: n };
}

function fixSource(state: RunState, n: number): FixSource {
  if (n === 0) return { source: "none" };
  const issued = state.attempts[n - 1]?.fixIssued ?? null;
  if (issued !== null) return { source: "issued", text: issued };
  if (state.judgeVerdicts.has(n) && gatesPassed(state, n)) return { source: "judge", attempt: n };
  return { source: "gates", attempt: n };
}

/**
 * What a resume does first with the log it finds (then it drives the run with `nextRunStep`):
 * `reopen` a run the user interrupted (that was no verdict; the state is read again after it),
 * nothing but the verdict for a `finished` run, `prepare` again a run that crashed while preparing,
 * `roll_back_builder` when the open attempt's builder was running (its effects are in doubt: the
 * workspace goes back to the last observation), or simply `continue`.
 */
export type ResumeStart = "reopen" | "finished" | "prepare" | "roll_back_builder" | "continue";

export function resumeStart(state: RunState, task: StepTask): ResumeStart {
  if (state.finished && state.interrupted) return "reopen";
  if (state.finished) return "finished";
  const step = nextRunStep(state, task);
  if (step.kind === "prepare") return "prepare";
  if (step.kind === "run_builder") return "roll_back_builder";
  return "continue";
}
