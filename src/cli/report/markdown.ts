import type { Envelope } from "../../core/run/envelope.js";

/** Control characters other than tab and newline, which no report should carry. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F]/g;
const LOG_CHARS = 4000;
const MAX_FINDINGS = 50;

/**
 * One table cell or inline phrase from text the builder may control: one line, HTML and Markdown
 * syntax neutralized (GitHub renders HTML in step summaries), pipes escaped.
 */
export function mdInline(s: string, max = 300): string {
  const one = s.replace(CONTROL, "").replace(/\s+/g, " ").trim();
  const cut = one.length > max ? `${one.slice(0, max - 1)}…` : one;
  return cut
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/([\\`*_[\]|#~!])/g, "\\$1");
}

/** A fenced block whose fence is longer than any run of backticks in the text, so the text cannot close it. */
export function mdFence(text: string): string {
  const clean = text.replace(CONTROL, "");
  const cut =
    clean.length > LOG_CHARS
      ? `${clean.slice(0, LOG_CHARS / 2)}\n[… ${clean.length - LOG_CHARS} characters cut …]\n${clean.slice(-LOG_CHARS / 2)}`
      : clean;
  const longest = Math.max(0, ...[...cut.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(Math.max(3, longest + 1));
  return `${fence}text\n${cut}${cut.endsWith("\n") ? "" : "\n"}${fence}`;
}

const ICON = { SUCCESS: "✅", ESCALATED: "❌", TOOL_FAILURE: "⚠️" } as const;

/** A Markdown summary of one run for `$GITHUB_STEP_SUMMARY` (or any Markdown reader). Pure. */
export function renderMarkdown(env: Envelope): string {
  const out: string[] = [];
  out.push(`## ${ICON[env.status]} loopgate: ${env.status} · ${mdInline(env.task_id)}`, "");
  out.push(`**Reason:** ${mdInline(env.reason, 1000)}`, "");
  out.push(
    `Run \`${env.run_id.replace(/`/g, "")}\` · ${env.attempts} attempt(s) · sandbox ${env.sandbox}${env.sandbox === "none" ? " (**ran without a sandbox**)" : ""}`,
    "",
  );
  const gates = env.gates.filter((g) => g.attempt === env.attempts);
  out.push(`### Gates (attempt ${env.attempts})`, "");
  if (gates.length === 0) out.push("No gate ran on the final attempt.", "");
  else {
    out.push("| gate | result | exit | time |", "|---|---|---|---|");
    for (const g of gates) {
      const result = g.passed
        ? "✅ passed"
        : g.timed_out
          ? "❌ timed out"
          : g.error
            ? `❌ ${mdInline(g.error)}`
            : "❌ failed";
      out.push(
        `| ${mdInline(g.id)} | ${result} | ${g.exit_code_note ? mdInline(g.exit_code_note, 400) : (g.exit_code ?? "—")} | ${(g.duration_ms / 1000).toFixed(1)} s |`,
      );
    }
    out.push("");
    for (const g of gates.filter((x) => !x.passed && x.log_excerpt.trim()))
      out.push(
        `<details><summary>log of ${mdInline(g.id)}</summary>`,
        "",
        mdFence(g.log_excerpt),
        "",
        "</details>",
        "",
      );
  }
  if (env.judge)
    out.push(
      `**Judge:** ${mdInline(env.judge.verdict)} (rules: ${mdInline(env.judge.rules_applied.join(", ") || "none")})`,
      "",
    );
  if (env.self_check)
    out.push(
      `**Self-check (advisory):** ${env.self_check.semantic_status}, repair gate ${env.self_check.decision}, repairs ${env.self_check.repairs_used} of ${env.self_check.cap}`,
      "",
    );
  out.push("### Findings", "");
  if (env.findings.length === 0) out.push("None.", "");
  else {
    out.push("| attempt | severity | code | path | detail |", "|---|---|---|---|---|");
    for (const f of env.findings.slice(0, MAX_FINDINGS))
      out.push(
        `| ${f.attempt} | ${f.severity} | ${mdInline(f.code)} | ${f.path ? mdInline(f.path) : ""} | ${mdInline(f.detail)} |`,
      );
    if (env.findings.length > MAX_FINDINGS)
      out.push(
        "",
        `… ${env.findings.length - MAX_FINDINGS} more findings: \`loopgate status ${env.run_id}\`.`,
      );
    out.push("");
  }
  const a = env.audit;
  out.push(
    "### Audit",
    "",
    "| self-corrections | latency | events | cost | tokens | hedge warning |",
    "|---|---|---|---|---|---|",
    `| ${a.self_correction_count} | ${(a.latency_ms / 1000).toFixed(1)} s | ${a.event_count} | ${a.cost === null ? "—" : `$${a.cost.toFixed(4)}`} | ${a.tokens ?? "—"} | ${a.hedge_warning ? "yes" : "no"} |`,
    "",
    `Audit trail: \`loopgate events ${env.run_id}\`. Claims the builder made are recorded, never evidence.`,
    "",
  );
  return out.join("\n");
}
