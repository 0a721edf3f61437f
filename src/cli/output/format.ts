import type { RecordedEvent } from "../../core/events/loopgate-event.js";
import type { Envelope } from "../../core/run/envelope.js";
import { logTail, oneLine } from "./excerpt.js";
import { type Hints, hintCommand } from "./hints.js";

/** One readable line per event, for `loopgate events`. */
export function formatEvent(e: RecordedEvent): string {
  const d = e.data as Record<string, unknown>;
  const head = `${String(e.revision).padStart(4)} ${e.meta.at.slice(11, 23)} ${e.type.padEnd(20)}`;
  switch (e.type) {
    case "run_started":
      return `${head} task ${e.data.task_id}, builder ${e.data.builder.kind}${e.data.builder.command ? ` (${e.data.builder.command})` : ""}, ${e.data.max_attempts} attempts max, sandbox ${e.data.sandbox}`;
    case "attempt_started":
      return `${head} attempt ${e.data.attempt}${e.data.required_fix ? " with a required fix" : ""}`;
    case "builder_finished":
      return `${head} exit ${e.data.exit_code ?? e.data.signal}${e.data.timed_out ? " (timed out)" : ""} in ${e.data.duration_ms} ms`;
    case "workspace_observed":
      return `${head} ${e.data.phase}: ${e.data.entries} entries, ${e.data.observation_id.slice(0, 12)} (${e.data.duration_ms} ms)`;
    case "workspace_changed":
      return `${head} +${e.data.added.total} ~${e.data.modified.total} -${e.data.removed.total} type:${e.data.type_changed.total}`;
    case "finding_recorded":
      return `${head} ${e.data.severity} ${e.data.code}${e.data.path ? ` ${oneLine(e.data.path)}` : ""}: ${oneLine(e.data.detail)}`;
    case "claim_recorded":
      return `${head} (claim, not evidence${e.data.hedged ? ", hedged" : ""}) ${JSON.stringify(e.data.text.slice(-120))}`;
    case "gate_run_finished":
      return `${head} ${e.data.gate_id}: ${e.data.passed ? "passed" : "NOT passed"} (${e.data.summary}) in ${e.data.duration_ms} ms`;
    case "attempt_finished":
      return `${head} attempt ${e.data.attempt} ${e.data.passed ? "passed" : "did not pass"}`;
    case "required_fix_issued":
      return `${head} ${JSON.stringify(e.data.text.split("\n")[1] ?? "")}`;
    case "infrastructure_failed":
      return `${head} ${oneLine(e.data.reason)}`;
    case "run_finished":
      return `${head} ${e.data.status}: ${oneLine(e.data.reason)}`;
    case "goal_set":
      return `${head} ${e.data.predicates
        .map((p) =>
          Object.entries(p)
            .map(([k, v]) => `${k}: ${v}`)
            .join(""),
        )
        .join("; ")} (max ${e.data.max_turns} turns)`;
    case "model_responded": {
      const calls = e.data.tool_calls.map((c) => c.name).join(", ");
      const text = e.data.text ? ` ${JSON.stringify(e.data.text.slice(0, 80))}` : "";
      return `${head} turn ${e.data.turn} step ${e.data.step}: ${calls ? `calls ${calls}` : "no tool calls"}${text} (${e.data.input_tokens + e.data.output_tokens} tokens${e.data.cost_usd !== null ? `, $${e.data.cost_usd.toFixed(4)}` : ""})`;
    }
    case "model_failed":
      return `${head} ${e.data.kind}: ${e.data.message.slice(0, 100)}${e.data.backoff_ms !== null ? ` (retry ${e.data.retry + 1} in ${e.data.backoff_ms} ms)` : ""}`;
    case "tool_call_started":
      return `${head} ${e.data.call_id} ${e.data.name} ${JSON.stringify(e.data.args).slice(0, 100)}`;
    case "tool_call_finished":
      return `${head} ${e.data.call_id} ${e.data.name}: ${!e.data.valid ? "invalid arguments" : e.data.is_error ? "error" : "ok"}${e.data.exit_code !== null ? ` exit ${e.data.exit_code}` : ""} in ${e.data.duration_ms} ms`;
    case "tool_call_abandoned":
      return `${head} ${e.data.call_id}: ${e.data.reason.slice(0, 100)}`;
    case "workspace_touched":
      return `${head} by ${e.data.call_id} → ${e.data.observation_id.slice(0, 12)}`;
    case "goal_probed":
      return `${head} ${Object.entries(e.data.predicate)
        .map(([k, v]) => `${k}: ${v}`)
        .join("")} ${e.data.holds ? "holds" : "does not hold"}`;
    case "goal_evaluated":
      return `${head} turn ${e.data.turn}: ${e.data.outcome} — ${e.data.reason}`;
    case "continuation_queued":
      return `${head} (continuation, not evidence) ${JSON.stringify(e.data.text.split("\n")[0])}`;
    case "budget_exhausted":
      return `${head} cap ${e.data.cap}: ${e.data.used} of ${e.data.limit}`;
    case "judge_finished":
      return `${head} attempt ${e.data.attempt}: ${e.data.verdict} — ${e.data.reason}${e.data.violations.length ? ` (violations: ${[...new Set(e.data.violations.map((v) => v.rule))].join(", ")})` : ""}`;
    case "self_check_plan_recorded":
      return `${head} ${e.data.call_id}: final artifacts ${e.data.plan.finalArtifacts.map((a) => a.path).join(", ")}`;
    case "self_check_recorded":
      return `${head} ${e.data.call_id}: claimed ${e.data.check.status}; verified ${e.data.verified_artifacts.length} artifact(s)${e.data.evidence_findings.length ? `; findings: ${[...new Set(e.data.evidence_findings.map((f) => f.code))].join(", ")}` : ""}`;
    case "repair_decided":
      return `${head} turn ${e.data.turn}: ${e.data.decision} (${e.data.semantic_status}; repairs ${e.data.repairs_used} of ${e.data.cap})${e.data.blockers.length ? ` blockers: ${[...new Set(e.data.blockers.map((b) => b.code))].join(", ")}` : ""}`;
    case "run_lease_taken": {
      const p = e.data.previous;
      const over = p
        ? ` (took over from pid ${p.pid} on ${p.host}: ${p.reason === "expired" ? `its lease expired at ${p.expires_at}` : "its process was gone"})`
        : "";
      return `${head} owner pid ${e.data.owner.pid} on ${e.data.owner.host}, lease until ${e.data.expires_at}${over}`;
    }
    case "run_lease_renewed":
      return `${head} lease until ${e.data.expires_at}`;
    case "run_resumed":
      return `${head} from revision ${e.data.from_revision}: ${e.data.action}`;
    case "todo_written": {
      const done = e.data.items.filter((x) => x.status === "completed").length;
      const parts = [`${e.data.call_id}: ${e.data.items.length} step(s), ${done} completed`];
      if (e.data.completed.length)
        parts.push(`completed ${e.data.completed.map((x) => JSON.stringify(x)).join(", ")}`);
      if (e.data.reopened.length)
        parts.push(`reopened ${e.data.reopened.map((x) => JSON.stringify(x)).join(", ")}`);
      if (e.data.changes.length) parts.push(`${e.data.changes.length} check change(s) reported`);
      return `${head} ${parts.join("; ")}`;
    }
    case "step_check_ran":
      return `${head} ${JSON.stringify(e.data.step)}: ${e.data.command.slice(0, 80)} → ${e.data.status}${e.data.exit_code !== null ? ` (exit ${e.data.exit_code})` : ""}`;
    case "step_appraised":
      return `${head} ${JSON.stringify(e.data.step)}: ${e.data.finding ?? "no finding (ambiguous)"} after ${e.data.calls} call(s)${e.data.check ? `, check ${e.data.check.verified ? "verified" : "unverified"}` : ""}`;
    case "step_escalated":
      return `${head} ${JSON.stringify(e.data.step)}: escalated (${e.data.trigger.replace("_", " ")}) → ${e.data.decision.replace("_", " ")} [${e.data.escalations_used}/5]`;
    case "agent_tool_observed":
      return `${head} (${e.data.agent} reported) ${oneLine(e.data.tool)} ${JSON.stringify(e.data.command.slice(0, 100))}${e.data.exit_code !== null ? ` exit ${e.data.exit_code}` : ""}`;
    case "hook_session_bound":
      return `${head} task ${oneLine(e.data.task_id)} (${oneLine(e.data.task_file)}), folder ${oneLine(e.data.cwd)}`;
    case "hook_stop_verified":
      return `${head} run ${e.data.run_id}: ${e.data.status} → ${e.data.decision} — ${oneLine(e.data.reason)}`;
    default:
      return `${head} ${JSON.stringify(d)}`;
  }
}

/** A short human summary of an envelope; `hints` make its pointers pasteable commands. */
export function formatEnvelope(e: Envelope, hints?: Hints): string {
  const wholeLog = hints ? hintCommand(hints, `status ${e.run_id} --json`) : undefined;
  const lines = [
    `${e.status} · run ${e.run_id} · task ${e.task_id} · ${e.attempts} attempt(s)`,
    `reason: ${oneLine(e.reason)}`,
  ];
  const last = e.gates.filter((g) => g.attempt === e.attempts);
  for (const g of last) {
    lines.push(
      `  ${g.passed ? "✓" : "✗"} ${g.id}${g.error ? ` (${g.error})` : ""}${g.error && g.summary ? `: ${g.summary}` : ""}`,
    );
    // A non-zero exit of a passed gate is loopgate's own canary or twins failing on purpose: say so.
    if (g.exit_code_note) lines.push(`      ${oneLine(g.exit_code_note)}`);
    // Why it failed, for the user (not the builder, whose feedback the gate's `feedback` limits).
    if (!g.passed) for (const l of logTail(g.log_excerpt, 6, 200, wholeLog)) lines.push(`      | ${l}`);
  }
  const blocking = e.findings.filter((f) => f.severity === "blocking");
  if (blocking.length)
    lines.push(
      `blocking findings: ${blocking.map((f) => `${f.code} ${oneLine(f.path ?? "")}`.trim()).join(", ")}`,
    );
  if (e.judge) lines.push(`judge: ${e.judge.verdict} (rules: ${e.judge.rules_applied.join(", ") || "none"})`);
  if (e.self_check)
    lines.push(
      `self-check (advisory): ${e.self_check.semantic_status}, repair gate ${e.self_check.decision}, repairs ${e.self_check.repairs_used} of ${e.self_check.cap}${e.self_check.blockers.length ? `; blockers: ${e.self_check.blockers.join(", ")}` : ""}`,
    );
  const warnings = e.findings.filter((f) => f.severity === "warning" && f.attempt === e.attempts);
  if (warnings.length)
    lines.push(
      `findings: ${warnings
        .slice(0, 5)
        .map((f) => `${f.code} ${oneLine(f.path ?? "")}`.trim())
        .join(", ")}${warnings.length > 5 ? ", …" : ""}`,
    );
  if (e.audit.hedge_warning)
    lines.push("hedge warning: the builder's last message hedged while claiming completion");
  if (e.sandbox === "none") lines.push("WARNING: ran without a sandbox (--unsafe-no-sandbox)");
  return lines.join("\n");
}
