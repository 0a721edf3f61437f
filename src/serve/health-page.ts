import { type StepHealth, stepHealth } from "../core/agent/step-appraisal.js";
import type { EventStore } from "../store/kernel/event-store.js";
import type { DoctorView } from "./board-readers.js";
import { type Html, html } from "./html.js";

/** `loopgate health`'s counters over every run of the store. */
export async function readHealth(store: EventStore): Promise<StepHealth> {
  const runs = [];
  for (const s of await store.listStreams({ prefix: "run-" })) runs.push(await store.readStream(s.stream));
  return stepHealth(runs);
}

const rate = (r: number | null, d: number, of: string) =>
  r === null ? `— (no ${of})` : `${(r * 100).toFixed(1)}% of ${d} ${of}`;

/** The health page's content: the plan-step counters, then every doctor check with its fix. */
export function healthMain(h: StepHealth, d: DoctorView): Html {
  const verdict =
    {
      ok: "all good",
      optional_missing: "loopgate works; something optional is missing",
      required_missing: "something loopgate needs is missing: fix the lines marked required",
    }[d.verdict] ?? d.verdict;
  return html`<h1>Health</h1>
<h2>Plan steps (loopgate health)</h2><div class="card"><dl class="kv">
<dt>runs</dt><dd>${h.runs}</dd>
<dt>step completions</dt><dd>${h.step_completions} (measured ${h.step_measured}, null ${h.step_nulls})</dd>
<dt>steps reopened</dt><dd>${h.step_reopens}</dd>
<dt>null-step rate</dt><dd>${rate(h.step_null_rate, h.step_null_rate_denominator, "runs with a measured completion")}</dd>
<dt>reopen rate</dt><dd>${rate(h.step_reopen_rate, h.step_reopen_rate_denominator, "runs that completed or reopened a step")}</dd>
</dl></div>
<h2>This machine (loopgate doctor) <span class="badge ${d.verdict === "ok" ? "ok" : d.verdict === "optional_missing" ? "warning" : "missing"}">${verdict}</span></h2>
<table><tr><th>check</th><th>state</th><th>need</th><th>detail</th></tr>
${d.checks.map(
  (
    c,
  ) => html`<tr><td><b>${c.id}</b></td><td><span class="badge ${c.state}">${c.state}</span></td><td>${c.need}</td>
<td>${c.detail}${c.remedy ? html`<br><span class="small">fix: ${c.remedy}</span>` : ""}</td></tr>`,
)}</table>`;
}
