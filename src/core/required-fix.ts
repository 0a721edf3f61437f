import type { EventData } from "./events.js";

/** What the builder may learn about one gate, per its `feedback` setting. */
export type Feedback = "none" | "summary" | "log";

const LOG_LIMIT = 2000;

/**
 * Builds the templated `required_fix` for the next attempt from public facts only: each failed gate
 * as its `feedback` allows (none: counted, never named; summary: id and outcome; log: plus a bounded
 * tail of its log), and the blocking findings about the builder's own workspace.
 */
export function buildRequiredFix(input: {
  attempt: number;
  gates: readonly EventData<"gate_run_finished">[];
  feedback: Readonly<Record<string, Feedback>>;
  findings: readonly EventData<"finding_recorded">[];
  deliverables: readonly string[];
}): string {
  const lines: string[] = [`Attempt ${input.attempt} did not pass loopgate's checks.`];
  let withheld = 0;
  for (const g of input.gates) {
    if (g.passed) continue;
    const fb = input.feedback[g.gate_id] ?? "none";
    if (fb === "none") {
      withheld++;
      continue;
    }
    lines.push(`- check ${g.gate_id}: ${outcome(g)}`);
    if (fb === "log" && g.log_excerpt.trim()) {
      const tail = g.log_excerpt.length > LOG_LIMIT ? `…${g.log_excerpt.slice(-LOG_LIMIT)}` : g.log_excerpt;
      lines.push(
        "  log (end):",
        ...tail
          .trimEnd()
          .split("\n")
          .map((l) => `    ${l}`),
      );
    }
  }
  if (withheld)
    lines.push(`- ${withheld} further check${withheld > 1 ? "s" : ""} failed (details withheld).`);
  for (const f of input.findings.filter((x) => x.severity === "blocking"))
    lines.push(`- ${f.code}${f.path ? ` at ${f.path}` : ""}: ${f.detail}`);
  const scope = input.deliverables.length ? ` (deliverables: ${input.deliverables.join(", ")})` : "";
  lines.push(
    `Fix the work itself${scope}; protected files are restored before every check, so changing them never helps.`,
  );
  return lines.join("\n");
}

function outcome(g: EventData<"gate_run_finished">): string {
  if (g.error === "timeout") return "timed out";
  if (g.error) return `could not decide (${g.error})`;
  return g.exit_code !== null ? `failed (exit ${g.exit_code})` : "failed";
}
