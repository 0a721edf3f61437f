// A seeded property check of the run decider, shipped with loopgate (so no fast-check): over many
// generated command sequences, SUCCESS never comes without every gate passing on the final attempt.

import type { EventData } from "../core/events/loopgate-event.js";
import { DomainError } from "../core/kernel/errors.js";
import {
  decide,
  type EventBody,
  evolve,
  foldRun,
  initialState,
  type RunCommand,
  verdict,
} from "../core/run/run-decider.js";

/** mulberry32: a small, fast, seeded PRNG; `next()` is uniform in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** What one sweep saw; `violations` lists sequences that broke the property (empty when it holds). */
export interface PropertyReport {
  sequences: number;
  successes: number;
  failedFinalGate: number;
  refused: number;
  violations: string[];
}

const GATES = ["a", "b", "c"];

function gateRun(
  attempt: number,
  gateId: string,
  passed: boolean,
  timeout: boolean,
): EventData<"gate_run_finished"> {
  return {
    attempt,
    gate_id: gateId,
    passed,
    exit_code: passed ? 0 : timeout ? null : 1,
    timed_out: timeout,
    error: timeout ? "timeout" : null,
    duration_ms: 1,
    log_excerpt: "",
    summary: "",
  };
}

/** One random command, sometimes out of order or naming an undeclared gate (the decider must refuse those). */
function randomCommand(rand: () => number, gates: string[], attempt: number): RunCommand {
  const pick = rand();
  const n = rand() < 0.9 ? Math.max(attempt, 1) : 1 + Math.floor(rand() * 3);
  if (pick < 0.15) return { type: "start_attempt", requiredFix: null };
  if (pick < 0.6) {
    const id = rand() < 0.95 ? (gates[Math.floor(rand() * gates.length)] ?? "a") : "undeclared";
    const passed = rand() < 0.85;
    return { type: "record_gate", data: gateRun(n, id, passed, !passed && rand() < 0.3) };
  }
  if (pick < 0.66)
    return {
      type: "record_finding",
      data: { attempt: n, code: "x", severity: rand() < 0.5 ? "blocking" : "warning", detail: "" },
    };
  if (pick < 0.82) return { type: "finish_attempt" };
  if (pick < 0.84) return { type: "fail_infrastructure", reason: "generated" };
  if (pick < 0.86)
    return {
      type: "record_agent",
      event: { type: "budget_exhausted", data: { attempt: n, cap: "cost_usd", limit: 1, used: 1 } },
    };
  return { type: "finish_run" };
}

/** Checks the property on one generated sequence; returns why it broke, or null. */
function violation(events: readonly EventBody[], status: string): string | null {
  if (status !== "SUCCESS") return null;
  const started = events.find((e) => e.type === "run_started");
  const declared = started?.type === "run_started" ? started.data.gates.map((g) => g.id) : [];
  const final = events.filter((e) => e.type === "attempt_started").length;
  if (final === 0) return "SUCCESS without any attempt";
  const runs = events.flatMap((e) =>
    e.type === "gate_run_finished" && e.data.attempt === final ? [e.data] : [],
  );
  for (const id of declared) {
    if (!runs.some((r) => r.gate_id === id))
      return `SUCCESS although gate ${id} never ran on attempt ${final}`;
    if (runs.some((r) => r.gate_id === id && !r.passed))
      return `SUCCESS although gate ${id} failed on the final attempt ${final}`;
  }
  if (
    events.some(
      (e) => e.type === "finding_recorded" && e.data.attempt === final && e.data.severity === "blocking",
    )
  )
    return "SUCCESS despite a blocking finding on the final attempt";
  if (events.some((e) => e.type === "infrastructure_failed" || e.type === "budget_exhausted"))
    return "SUCCESS despite an infrastructure failure or an exhausted budget";
  return null;
}

/** Generates `count` sequences from `seed` and checks the property and replay determinism on each. */
export function checkDeciderProperty(seed: number, count: number): PropertyReport {
  const rand = seededRandom(seed);
  const report: PropertyReport = {
    sequences: 0,
    successes: 0,
    failedFinalGate: 0,
    refused: 0,
    violations: [],
  };
  for (let i = 0; i < count; i++) {
    const gates = GATES.slice(0, 1 + Math.floor(rand() * GATES.length));
    const maxAttempts = 1 + Math.floor(rand() * 3);
    let state = initialState();
    const events: EventBody[] = [];
    const apply = (command: RunCommand) => {
      try {
        for (const e of decide(command, state)) {
          state = evolve(state, e);
          events.push(e);
        }
      } catch (e) {
        if (!(e instanceof DomainError)) throw e;
        report.refused++;
      }
    };
    apply({
      type: "start_run",
      data: {
        task_id: "t",
        task_path: "/t/task.yaml",
        task_digest: "d",
        builder: { kind: "noop" },
        max_attempts: maxAttempts,
        gates: gates.map((id) => ({ id, kind: "subprocess" as const })),
        sandbox: "bubblewrap",
        run_dir: "/r",
      },
    });
    const steps = 4 + Math.floor(rand() * 30);
    for (let s = 0; s < steps; s++) apply(randomCommand(rand, gates, state.attempts.length));
    const { status } = verdict(state);
    report.sequences++;
    if (status === "SUCCESS") report.successes++;
    const final = state.attempts.length;
    if (events.some((e) => e.type === "gate_run_finished" && e.data.attempt === final && !e.data.passed))
      report.failedFinalGate++;
    const broken = violation(events, status);
    if (broken) report.violations.push(`sequence ${i}: ${broken}`);
    if (verdict(foldRun(events)).status !== status)
      report.violations.push(`sequence ${i}: replaying the events gives another verdict`);
    const finished = events.find((e) => e.type === "run_finished");
    if (finished?.type === "run_finished" && finished.data.status !== status)
      report.violations.push(
        `sequence ${i}: run_finished says ${finished.data.status}, the events say ${status}`,
      );
  }
  return report;
}
