import type { EventData, GateError } from "./events.js";

/** What the builder may learn about one gate, per its `feedback` setting. */
export type Feedback = "none" | "summary" | "log";

const LOG_LIMIT = 2000;

/**
 * Builds the templated `required_fix` for the next attempt from public facts only: each failed gate
 * as its `feedback` allows (none: counted, never named; summary: id and a one-word outcome; log: plus
 * the exit code and a bounded tail of its log), and the blocking findings about the builder's own workspace.
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
    lines.push(`- check ${g.gate_id}: ${feedbackOutcome(g, fb)}`);
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

/** How a gate that could not decide is worded to the builder: a fixed word per error, never a figure. */
const ERROR_WORD: Record<GateError, string> = {
  timeout: "timed out",
  crashed: "crashed",
  tampered: "tampered",
  spawn_failed: "could not run",
  unreadable: "gave no readable test results",
  sandbox_unavailable: "could not run",
  too_few_tests: "ran too few tests",
};

/**
 * A gate's outcome as the builder may read it. Under `summary` it is one fixed word (passed, failed,
 * timed out, crashed, tampered, could not run): never an exit code, signal, test count or duration,
 * because the code under test controls those and could spell held-out content with them, one attempt
 * at a time. Only `log`, which shows the log anyway, adds the exit code. The envelope keeps every figure.
 */
export function feedbackOutcome(
  g: Pick<EventData<"gate_run_finished">, "passed" | "error" | "exit_code">,
  feedback: Feedback,
): string {
  if (g.passed) return "passed";
  const word = g.error ? ERROR_WORD[g.error] : "failed";
  return feedback === "log" && g.exit_code !== null ? `${word} (exit ${g.exit_code})` : word;
}
