import { z } from "zod";
import { Finding, GateTamper, type LoopgateEvent, RunStatus } from "../events/loopgate-event.js";
import { agentUsage } from "./agent-projections.js";
import { foldRun, verdict } from "./run-decider.js";

/** The typed delivery record (docs/reference/envelope.md); `loopgate run --json` prints it. */
export const Envelope = z.object({
  run_id: z.string(),
  task_id: z.string(),
  status: RunStatus,
  reason: z.string(),
  attempts: z.number().int().nonnegative(),
  gates: z.array(
    z.object({
      id: z.string(),
      attempt: z.number().int(),
      passed: z.boolean(),
      exit_code: z.number().int().nullable(),
      timed_out: z.boolean(),
      error: z.string().nullable(),
      duration_ms: z.number(),
      log_excerpt: z.string(),
      /** loopgate's one-line account of the result (why a gate did not pass). */
      summary: z.string().optional(),
      /** A differential gate's generator seed, drawn at gate time. */
      seed: z.number().int().optional(),
      /** How loopgate checked that this gate's result can be believed (subprocess gates). */
      tamper: GateTamper.optional(),
      /**
       * Why the exit code is not 0 when loopgate's own planted tests (its canary, mutated twins) made it so:
       * they fail on purpose in the same run. Absent when nothing of loopgate's explains the exit code.
       */
      exit_code_note: z.string().optional(),
    }),
  ),
  /** The judge's verdict on the final attempt, when the task has a judge and it was consulted. */
  judge: z.object({ verdict: z.string(), rules_applied: z.array(z.string()) }).optional(),
  findings: z.array(Finding),
  /** The built-in agent's self-check on the final attempt (heavy mode): advisory, never decides the status. */
  self_check: z
    .object({
      advisory: z.literal(true),
      semantic_status: z.enum(["complete", "incomplete"]),
      decision: z.enum(["allow", "repair", "cap_reached"]),
      blockers: z.array(z.string()),
      repairs_used: z.number().int().nonnegative(),
      cap: z.number().int().nonnegative(),
    })
    .optional(),
  claims: z.array(z.object({ attempt: z.number().int(), text: z.string(), hedged: z.boolean() })),
  sandbox: z.enum(["bubblewrap", "none"]),
  /** The task's shared dependency folders as the run mounted them: each one's content address and file count. */
  dependencies: z
    .array(z.object({ path: z.string(), digest: z.string(), files: z.number().int().nonnegative() }))
    .optional(),
  audit: z.object({
    self_correction_count: z.number().int().nonnegative(),
    latency_ms: z.number().nonnegative(),
    hedge_warning: z.boolean(),
    /** The model cost in USD over the run (the built-in agent's, or what an external agent reported); null without a priced response. */
    cost: z.number().nullable(),
    /** Input + output tokens over the run (the built-in agent's, or an external agent's report); null when none was recorded. */
    tokens: z.number().nullable(),
    event_count: z.number().int().nonnegative(),
  }),
});
export type Envelope = z.infer<typeof Envelope>;

/**
 * Projects a run's events into its envelope. Pure: the status comes from the decider's verdict over the
 * events, never from a stored field. Returns null while the run has not finished.
 */
export function projectEnvelope(runId: string, events: readonly LoopgateEvent[]): Envelope | null {
  const state = foldRun(events);
  // Not `some(run_finished)`: a resume can reopen a run that finished as interrupted.
  if (!state.finished) return null;
  const { status, reason } = verdict(state);
  const gates: Envelope["gates"] = [];
  const findings: Envelope["findings"] = [];
  const claims: Envelope["claims"] = [];
  let sandbox: Envelope["sandbox"] = "none";
  let dependencies: Envelope["dependencies"];
  let judge: Envelope["judge"];
  let selfCheck: Envelope["self_check"];
  for (const e of events) {
    if (e.type === "run_started") {
      sandbox = e.data.sandbox;
      if (e.data.dependencies) dependencies = e.data.dependencies;
    } else if (e.type === "gate_run_finished") {
      const note = exitCodeNote(e.data);
      gates.push({
        id: e.data.gate_id,
        attempt: e.data.attempt,
        passed: e.data.passed,
        exit_code: e.data.exit_code,
        timed_out: e.data.timed_out,
        error: e.data.error,
        duration_ms: e.data.duration_ms,
        log_excerpt: markCanaryLines(e.data.log_excerpt, e.data.tamper?.canary.tests ?? []),
        summary: e.data.summary,
        ...(e.data.seed !== undefined ? { seed: e.data.seed } : {}),
        ...(e.data.tamper ? { tamper: e.data.tamper } : {}),
        ...(note ? { exit_code_note: note } : {}),
      });
    } else if (e.type === "finding_recorded") findings.push(e.data);
    else if (e.type === "judge_finished" && e.data.attempt === state.attempts.length)
      judge = { verdict: e.data.verdict, rules_applied: e.data.rules_applied };
    else if (e.type === "repair_decided")
      selfCheck = {
        advisory: true,
        semantic_status: e.data.semantic_status,
        decision: e.data.decision,
        blockers: [...new Set(e.data.blockers.map((b) => b.code))],
        repairs_used: e.data.repairs_used,
        cap: e.data.cap,
      };
    else if (e.type === "claim_recorded")
      claims.push({ attempt: e.data.attempt, text: e.data.text, hedged: e.data.hedged });
  }
  const attempts = state.attempts.length;
  const first = events[0]?.meta.at;
  const last = events[events.length - 1]?.meta.at;
  const latency = first && last ? Math.max(0, Date.parse(last) - Date.parse(first)) : 0;
  const usage = agentUsage(events);
  // An external agent's own account of its sessions (Claude Code's result line, Codex's turn usage).
  let externalCost: number | null = null;
  let externalTokens: number | null = null;
  for (const e of events) {
    if (e.type !== "agent_session_finished") continue;
    if (e.data.total_cost_usd !== null) externalCost = (externalCost ?? 0) + e.data.total_cost_usd;
    if (e.data.input_tokens !== null || e.data.output_tokens !== null)
      externalTokens = (externalTokens ?? 0) + (e.data.input_tokens ?? 0) + (e.data.output_tokens ?? 0);
  }
  const cost = usage.priced ? usage.costUsd + (externalCost ?? 0) : externalCost;
  const tokens = usage.responses > 0 ? usage.tokens + (externalTokens ?? 0) : externalTokens;
  return {
    run_id: runId,
    task_id: state.taskId,
    status,
    reason,
    attempts,
    gates,
    ...(judge ? { judge } : {}),
    findings,
    ...(selfCheck ? { self_check: selfCheck } : {}),
    claims,
    sandbox,
    ...(dependencies ? { dependencies } : {}),
    audit: {
      self_correction_count: Math.max(0, attempts - 1),
      latency_ms: latency,
      hedge_warning: claims.some((c) => c.attempt === attempts && c.hedged),
      cost: cost === null ? null : Math.round(cost * 1e6) / 1e6,
      tokens,
      // Heartbeats say how long the run took, not what it did: they are not counted.
      event_count: events.filter((e) => e.type !== "run_lease_renewed").length,
    },
  };
}

/** What marks a line of a gate's log that names one of loopgate's canary tests. */
export const CANARY_LINE_MARK = "[loopgate's canary, fails on purpose] ";

/**
 * A gate's log with every line that names one of loopgate's canary tests marked as loopgate's. Only
 * the user's copies are marked (the envelope and what is printed from it): the recorded log, which a
 * builder's required fix quotes, stays as the runner wrote it, so no builder learns the canary's shape.
 */
export function markCanaryLines(log: string, names: readonly string[]): string {
  const wanted = names.filter((n) => n.trim() !== "");
  if (!wanted.length) return log;
  // A whole name: not a part of a longer one (a twin's name may end with a canary's words and a digit more).
  const escaped = wanted.map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const named = new RegExp(`(?<![\\p{L}\\p{N}_])(?:${escaped.join("|")})(?![\\p{L}\\p{N}_])`, "u");
  return log
    .split("\n")
    .map((line) => (named.test(line) ? `${CANARY_LINE_MARK}${line}` : line))
    .join("\n");
}

/** The facts of one gate run that explain its exit code. */
type GateFacts = Pick<Envelope["gates"][number], "passed" | "exit_code" | "tamper">;

/**
 * Why a gate's exit code is not 0 when loopgate's own planted tests explain it, or null. loopgate's canary
 * and mutated twins run inside the gate's own test run and fail on purpose, so a gate whose real tests all
 * passed exits non-zero (docs/explanation/tamper-checks.md). A gate that did not pass is never explained
 * away: its note says its own tests failed, or that it did not pass for another reason.
 */
export function exitCodeNote(g: GateFacts): string | null {
  const t = g.tamper;
  if (t?.check !== "auto" || g.exit_code === null || g.exit_code === 0) return null;
  // A gate passes with a canary only when every canary test failed and the runner exited non-zero.
  const canaryFailed = t.canary.auto && (g.passed || t.canary.failed_as_expected === true);
  const twins = g.passed ? (t.twins?.failed ?? 0) : 0;
  if (!canaryFailed && twins === 0) return null;
  const names = t.canary.tests ?? [];
  const shown = names.slice(0, 3).map((n) => JSON.stringify(n));
  const more = names.length > shown.length ? ` and ${names.length - shown.length} more` : "";
  const parts = [
    canaryFailed
      ? `canary ${plural(names.length || 1, "test")}${shown.length ? ` ${shown.join(", ")}${more}` : ""}`
      : null,
    twins > 0 ? `${twins} mutated twin ${plural(twins, "test")}` : null,
  ].filter((x) => x !== null);
  const planted = `loopgate's ${parts.join(" and ")}`;
  const fail = (canaryFailed ? names.length || 1 : 0) + twins > 1 ? "fail" : "fails";
  const code = `exit ${g.exit_code}`;
  if (g.passed)
    return `${code} from ${planted}, which ${fail} on purpose: as expected, every real test passed`;
  const failed = t.tests?.failed ?? 0;
  if (failed > 0)
    return `${code}: ${failed} real ${plural(failed, "test")} failed; ${planted} failed too, as expected`;
  return `${code} from ${planted}, which ${fail} on purpose; the gate did not pass for another reason (its summary says why)`;
}

function plural(n: number, word: string): string {
  return n === 1 ? word : `${word}s`;
}
