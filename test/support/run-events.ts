/** Event bodies of a run log, written out for decider and next-step tests. */
import type { EventData } from "../../src/core/events/loopgate-event.js";
import type { EventBody } from "../../src/core/run/run-decider.js";

export const started = (
  gates: string[],
  o: { max?: number; judge?: boolean; builder?: EventData<"run_started">["builder"]["kind"] } = {},
): EventBody => ({
  type: "run_started",
  data: {
    task_id: "t",
    task_path: "/t/task.yaml",
    task_digest: "d",
    builder: { kind: o.builder ?? "command", command: "./build.sh" },
    max_attempts: o.max ?? 3,
    gates: gates.map((id) => ({ id, kind: "subprocess" as const })),
    sandbox: "bubblewrap",
    run_dir: "/r",
    ...(o.judge ? { judge: "scripted:judge.yaml" } : {}),
  },
});
export const pristine = (id = "obs-pristine"): EventBody => ({
  type: "workspace_observed",
  data: { attempt: 0, phase: "pristine", observation_id: id, entries: 3, duration_ms: 1 },
});
export const attempt = (n: number, fix: string | null = null): EventBody => ({
  type: "attempt_started",
  data: { attempt: n, required_fix: fix },
});
export const built = (n: number): EventBody => ({
  type: "builder_finished",
  data: {
    attempt: n,
    exit_code: 0,
    signal: null,
    timed_out: false,
    duration_ms: 5,
    output_excerpt: "",
  },
});
export const observed = (n: number, id = `obs-after-${n}`): EventBody => ({
  type: "workspace_observed",
  data: { attempt: n, phase: "after_builder", observation_id: id, entries: 3, duration_ms: 1 },
});
export const touched = (n: number, call: string, id: string): EventBody => ({
  type: "workspace_touched",
  data: { attempt: n, call_id: call, observation_id: id },
});
export const gate = (n: number, id: string, passed: boolean): EventBody => ({
  type: "gate_run_finished",
  data: {
    attempt: n,
    gate_id: id,
    passed,
    exit_code: passed ? 0 : 1,
    timed_out: false,
    error: null,
    duration_ms: 1,
    log_excerpt: "",
    summary: "",
  },
});
export const judged = (n: number, verdict: "approve" | "reject"): EventBody => ({
  type: "judge_finished",
  data: {
    attempt: n,
    verdict,
    rules_applied: [],
    violations: [],
    reason: verdict === "reject" ? "renamed a public function" : "ok",
    duration_ms: 1,
  },
});
export const closed = (n: number, passed: boolean): EventBody => ({
  type: "attempt_finished",
  data: { attempt: n, passed },
});
export const fixIssued = (n: number, text: string): EventBody => ({
  type: "required_fix_issued",
  data: { attempt: n, text },
});
export const blockingFinding = (n: number, code = "protected_path_modified"): EventBody => ({
  type: "finding_recorded",
  data: { attempt: n, code, severity: "blocking", path: "test/a.js", detail: "x" },
});
export const capped = (n: number): EventBody => ({
  type: "budget_exhausted",
  data: { attempt: n, cap: "turns", limit: 2, used: 2 },
});
export const infrastructure = (n: number, reason: string, interrupted = false): EventBody => ({
  type: "infrastructure_failed",
  data: { attempt: n, reason, ...(interrupted ? { interrupted: true } : {}) },
});
export const runFinished = (status: "SUCCESS" | "ESCALATED" | "TOOL_FAILURE", reason: string): EventBody => ({
  type: "run_finished",
  data: { status, reason },
});
export const reopened = (): EventBody => ({
  type: "run_resumed",
  data: { from_revision: 9, in_doubt: [], action: "reopened", reopened: true },
});
