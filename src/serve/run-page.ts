import type { EventData, RecordedEvent } from "../core/events/loopgate-event.js";
import { clip, type Html, html, when } from "./html.js";
import type { GateDiff } from "./run-diff.js";
import type { AttemptFacts, RunFacts } from "./run-facts.js";

/** The most characters of one log or output excerpt a page shows (the log's own excerpt is bounded too). */
const EXCERPT_CHARS = 6000;

/** What the run page shows beside the run's facts (read by the caller through the CLI's readers). */
export interface RunPageInput {
  facts: RunFacts;
  diff: GateDiff;
  /** One event as `loopgate events` prints it. */
  eventLine: (e: RecordedEvent) => string;
  /** Who drives the run while it is unfinished (`loopgate status`'s owner line). */
  ownerLine: string | null;
  /** The run queue's line for this run (PostgreSQL), if any. */
  queueLine: string | null;
}

const badge = (word: string, cls = word) => html`<span class="badge ${cls}">${word}</span>`;

function gateOutcome(g: EventData<"gate_run_finished">): Html {
  if (g.passed) return badge("passed");
  if (g.timed_out) return badge("timed out", "failed");
  if (g.error) return badge(`not passed: ${g.error}`, "failed");
  return badge("failed");
}

function tamperSummary(g: EventData<"gate_run_finished">): Html {
  const t = g.tamper;
  if (!t) return html`<span class="muted">—</span>`;
  const parts: string[] = [`check ${t.check}${t.runner ? ` (${t.runner})` : ""}`];
  if (t.identity) parts.push(`identity ${t.identity.passed}/${t.identity.required} (${t.identity.source})`);
  if (t.twins) parts.push(`twins ${t.twins.failed}/${t.twins.planted} failed as they must`);
  if (t.canary.auto || t.canary.declared)
    parts.push(
      `canary ${t.canary.auto ? "planted" : "declared"}${t.canary.failed_as_expected === undefined ? "" : t.canary.failed_as_expected ? ", failed as expected" : ", did NOT fail as expected"}`,
    );
  parts.push(`floor ${t.floor.min} (${t.floor.source})`);
  return html`${parts.join(" · ")}${t.note ? html`<br><span class="muted">${t.note}</span>` : ""}`;
}

const testCounts = (g: EventData<"gate_run_finished">) => {
  const t = g.tamper?.tests;
  return t ? `${t.passed} passed · ${t.failed} failed · ${t.skipped} skipped` : "—";
};

function attemptSection(a: AttemptFacts): Html {
  const failed = a.gates.some((g) => !g.passed) || a.passed === false;
  const claims = a.claims.length
    ? a.claims.map(
        (c) =>
          html`<p class="claimtext">${clip(c.text, 1500)}</p>${c.hedged ? html`<p class="small muted">hedged</p>` : ""}`,
      )
    : html`<p class="muted">The builder claimed nothing in words.</p>`;
  const gates = a.gates.length
    ? html`<table><tr><th>gate</th><th>outcome</th><th>tests</th><th>tamper checks</th><th>exit</th><th>time</th></tr>
${a.gates.map(
  (
    g,
  ) => html`<tr><td><b>${g.gate_id}</b><br><span class="small muted">${g.summary}</span></td><td>${gateOutcome(g)}</td>
<td>${testCounts(g)}</td><td class="small">${tamperSummary(g)}</td><td>${g.exit_code ?? "—"}</td><td>${(g.duration_ms / 1000).toFixed(1)} s</td></tr>`,
)}</table>
${a.gates.map(
  (g) =>
    html`<details${g.passed ? "" : " open"}><summary>log of ${g.gate_id} (excerpt)</summary><pre>${clip(g.log_excerpt, EXCERPT_CHARS) || "(empty)"}</pre></details>`,
)}`
    : html`<p class="muted">No gate ran on this attempt.</p>`;
  const judge = a.judge
    ? html`<p><b>Judge:</b> ${badge(a.judge.verdict, a.judge.verdict === "approve" ? "passed" : "failed")} ${a.judge.reason}
${a.judge.violations.length ? html`<ul>${a.judge.violations.map((v) => html`<li>${v.rule}: ${clip(v.evidence, 600)}</li>`)}</ul>` : ""}</p>`
    : "";
  const findings = a.findings.length
    ? html`<h3>Findings</h3><ul>${a.findings.map(
        (f) =>
          html`<li>${badge(f.severity, f.severity === "blocking" ? "failed" : "warning")} <b>${f.code}</b>${f.path ? html` <code>${f.path}</code>` : ""}: ${f.detail}</li>`,
      )}</ul>`
    : "";
  const changed = a.changed
    ? html`<p class="small"><b>Workspace changed:</b> ${a.changed.added.total} added, ${a.changed.modified.total} modified, ${a.changed.removed.total} removed
${[...a.changed.added.paths.map((p) => `+${p}`), ...a.changed.modified.paths.map((p) => `~${p}`), ...a.changed.removed.paths.map((p) => `-${p}`)].slice(0, 40).map((p) => html` <code>${p}</code>`)}</p>`
    : "";
  const builder = a.builder
    ? html`<details><summary>builder: exit ${a.builder.exit_code ?? a.builder.signal ?? "?"}${a.builder.timed_out ? " (timed out)" : ""} in ${(a.builder.duration_ms / 1000).toFixed(1)} s — its output (excerpt)</summary><pre>${clip(a.builder.output_excerpt, EXCERPT_CHARS) || "(empty)"}</pre></details>`
    : "";
  return html`<section class="card attempt" id="attempt-${a.attempt}">
<h2>Attempt ${a.attempt} ${a.passed === null ? badge("not finished", "RUNNING") : a.passed ? badge("passed") : badge("did not pass", "failed")}</h2>
${a.requiredFix ? html`<details><summary>required fix given to the builder</summary><pre>${clip(a.requiredFix, EXCERPT_CHARS)}</pre></details>` : ""}
${a.infrastructure ? html`<p class="notice error">Infrastructure: ${a.infrastructure}</p>` : ""}
<div class="pair">
<div class="card claim"><div class="label">Claimed — the builder's words, never evidence</div>${claims}</div>
<div class="card evidence${failed ? " bad" : ""}"><div class="label">Evidence — held-out gates, run by loopgate</div>${gates}${judge}</div>
</div>
${findings}${changed}${builder}
</section>`;
}

function diffSection(d: GateDiff): Html {
  if (d.unavailable)
    return html`<h2>The change the gates saw</h2><p class="muted">Not available: ${d.unavailable}</p>`;
  return html`<h2>The change the gates saw (attempt ${d.attempt})</h2>
${d.files.length === 0 ? html`<p class="muted">The gates saw no change from the pristine workspace.</p>` : ""}
${d.files.map(
  (
    f,
  ) => html`<details open class="diff"><summary><code>${f.path}</code> ${badge(f.change, f.change === "removed" ? "failed" : "passed")}${f.note ? html` <span class="muted">${f.note}</span>` : ""}</summary>
${f.text === null ? "" : html`<pre>${f.text.split("\n").map((l) => html`<span class="${l.startsWith("@@") ? "hunk" : l.startsWith("+") ? "add" : l.startsWith("-") ? "del" : ""}">${l}</span>\n`)}</pre>`}</details>`,
)}
${d.omitted ? html`<p class="muted">${d.omitted} more changed paths not listed.</p>` : ""}`;
}

function envelopeSection(f: RunFacts): Html {
  const env = f.envelope;
  if (!env) return html`<p class="muted">No envelope yet: the run has not finished.</p>`;
  const a = env.audit;
  return html`<h2>Envelope and audit</h2><div class="card"><dl class="kv">
<dt>status</dt><dd>${badge(env.status)} ${env.reason}</dd>
<dt>attempts</dt><dd>${env.attempts} (self-corrections ${a.self_correction_count})</dd>
<dt>judge</dt><dd>${env.judge ? `${env.judge.verdict} (rules: ${env.judge.rules_applied.join(", ") || "none"})` : "none configured"}</dd>
<dt>tokens</dt><dd>${a.tokens ?? "none recorded"}</dd>
<dt>cost</dt><dd>${a.cost === null ? "no priced response" : `$${a.cost.toFixed(4)}`}</dd>
<dt>time</dt><dd>${(a.latency_ms / 1000).toFixed(1)} s</dd>
<dt>events</dt><dd>${a.event_count}</dd>
<dt>sandbox</dt><dd>${env.sandbox}${env.sandbox === "none" ? " (ran without a sandbox)" : ""}</dd>
<dt>hedge warning</dt><dd>${a.hedge_warning ? "yes: a claim hedged" : "no"}</dd>
${env.self_check ? html`<dt>self-check</dt><dd>${env.self_check.semantic_status}, ${env.self_check.decision} (advisory)</dd>` : ""}
</dl><details><summary>the envelope as JSON (what loopgate run --json printed)</summary><pre>${JSON.stringify(env, null, 2)}</pre></details></div>`;
}

function timeline(f: RunFacts, line: (e: RecordedEvent) => string): Html {
  const renewals = f.events.filter((e) => e.type === "run_lease_renewed").length;
  return html`<h2>Timeline</h2><table class="timeline"><tr><th>origin</th><th>event (as loopgate events prints it)</th></tr>
${f.events
  .filter((e) => e.type !== "run_lease_renewed")
  .map((e) => html`<tr><td>${e.meta.origin}</td><td><code>${line(e)}</code></td></tr>`)}
</table>${renewals ? html`<p class="muted small">${renewals} lease renewal(s) not shown.</p>` : ""}`;
}

/** The run page's content: header, envelope, each attempt's claim beside its evidence, the diff, the timeline. */
export function runMain(p: RunPageInput): Html {
  const f = p.facts;
  const s = f.started;
  const status = f.envelope?.status ?? "RUNNING";
  return html`<h1>Run <code>${f.runId}</code> ${badge(status)}</h1>
<p>task <b>${f.taskId || "?"}</b>${s ? html` · builder ${s.builder.kind}${s.builder.command ? html` <code>${clip(s.builder.command, 200)}</code>` : ""} · at most ${s.max_attempts} attempts · sandbox ${s.sandbox}` : ""} · started ${when(f.events[0]?.meta.at)}</p>
${f.envelope ? html`<p><b>Verdict:</b> ${f.envelope.reason}</p>` : html`<p class="notice">Not finished. ${p.ownerLine ?? ""}</p>`}
${p.queueLine ? html`<p class="small muted">queue: ${p.queueLine}</p>` : ""}
${f.attempts.map(attemptSection)}
${diffSection(p.diff)}
${envelopeSection(f)}
${timeline(f, p.eventLine)}`;
}
