import type { EventData, RecordedEvent } from "../core/events/loopgate-event.js";
import { type Envelope, projectEnvelope } from "../core/run/envelope.js";
import { foldRun } from "../core/run/run-decider.js";

/** One attempt as the run page lays it out: what the builder claimed beside what loopgate observed. */
export interface AttemptFacts {
  attempt: number;
  requiredFix: string | null;
  builder: EventData<"builder_finished"> | null;
  changed: EventData<"workspace_changed"> | null;
  /** What the builder said (claims, never evidence). */
  claims: EventData<"claim_recorded">[];
  /** What the held-out gates said (evidence). */
  gates: EventData<"gate_run_finished">[];
  findings: EventData<"finding_recorded">[];
  judge: EventData<"judge_finished"> | null;
  /** The attempt's own end: passed, did not, or not recorded yet. */
  passed: boolean | null;
  infrastructure: string | null;
}

/** A run as its page shows it: the log, the envelope projected from it, and each attempt's facts. */
export interface RunFacts {
  runId: string;
  taskId: string;
  started: EventData<"run_started"> | null;
  events: RecordedEvent[];
  /** Null while the run has not finished. */
  envelope: Envelope | null;
  attempts: AttemptFacts[];
}

function blank(attempt: number): AttemptFacts {
  return {
    attempt,
    requiredFix: null,
    builder: null,
    changed: null,
    claims: [],
    gates: [],
    findings: [],
    judge: null,
    passed: null,
    infrastructure: null,
  };
}

/**
 * The facts of a run's log grouped by attempt. Pure; the verdict and the envelope come from the run
 * decider and the envelope projection (core/run), never from here.
 */
export function runFacts(runId: string, events: readonly RecordedEvent[]): RunFacts {
  const byAttempt = new Map<number, AttemptFacts>();
  const at = (n: number) => {
    let a = byAttempt.get(n);
    if (!a) {
      a = blank(n);
      byAttempt.set(n, a);
    }
    return a;
  };
  let started: RunFacts["started"] = null;
  for (const e of events) {
    switch (e.type) {
      case "run_started":
        started = e.data;
        break;
      case "attempt_started":
        at(e.data.attempt).requiredFix = e.data.required_fix;
        break;
      case "builder_finished":
        at(e.data.attempt).builder = e.data;
        break;
      case "workspace_changed":
        at(e.data.attempt).changed = e.data;
        break;
      case "claim_recorded":
        at(e.data.attempt).claims.push(e.data);
        break;
      case "gate_run_finished":
        at(e.data.attempt).gates.push(e.data);
        break;
      case "finding_recorded":
        at(e.data.attempt).findings.push(e.data);
        break;
      case "judge_finished":
        at(e.data.attempt).judge = e.data;
        break;
      case "attempt_finished":
        at(e.data.attempt).passed = e.data.passed;
        break;
      case "infrastructure_failed":
        if (e.data.attempt > 0) at(e.data.attempt).infrastructure = e.data.reason;
        break;
      default:
        break;
    }
  }
  return {
    runId,
    taskId: foldRun(events).taskId,
    started,
    events: [...events],
    envelope: projectEnvelope(runId, events),
    attempts: [...byAttempt.values()].filter((a) => a.attempt > 0).sort((a, b) => a.attempt - b.attempt),
  };
}
