import type { EventData, GateError } from "../events/loopgate-event.js";
import { boundList, boundName, boundText, LIMITS } from "../kernel/bounded.js";

/** What the builder may learn about one gate, per its `feedback` setting. */
export type Feedback = "none" | "summary" | "log";

/** What one failed gate's log may add to the required fix: its last lines, each cut, all of them cut. */
const LOG_LIMIT = 2000;
const LOG_LINES = 40;
const LOG_LINE_WIDTH = 300;
/** Blocking findings listed one by one; the rest are counted. */
const MAX_FINDINGS = 20;

/**
 * Builds the templated `required_fix` for the next attempt from public facts only: each failed gate
 * as its `feedback` allows (none: counted, never named; summary: id and `not passed`, one bit; log: plus
 * the kind of failure, the exit code and a bounded tail of its log), and the blocking findings about the
 * builder's own workspace.
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
    if (fb === "log" && g.log_excerpt.trim()) lines.push("  log (end):", logTail(g.log_excerpt));
  }
  if (withheld)
    lines.push(`- ${withheld} further check${withheld > 1 ? "s" : ""} failed (details withheld).`);
  const blocking = boundList(
    input.findings.filter((x) => x.severity === "blocking"),
    MAX_FINDINGS,
  );
  for (const f of blocking.kept)
    lines.push(
      `- ${f.code}${f.path ? ` at ${boundName(f.path)}` : ""}: ${boundText(f.detail, LIMITS.detail)}`,
    );
  if (blocking.dropped) lines.push(`- and ${blocking.dropped} more blocking findings (not listed).`);
  const scope = input.deliverables.length
    ? ` (deliverables: ${boundName(input.deliverables.join(", "), 500)})`
    : "";
  const closing = `Fix the work itself${scope}; protected files are restored before every check, so changing them never helps.`;
  // The closing line is loopgate's own and always survives the cut.
  return `${boundText(lines.join("\n"), LIMITS.requiredFix - closing.length - 1, { head: 0.7 })}\n${closing}`;
}

/** The end of a gate log as the required fix shows it: at most LOG_LINES lines, each indented and cut. */
function logTail(log: string): string {
  const all = log.trimEnd().split(/\r?\n/);
  const { kept, dropped } = boundList(all.reverse(), LOG_LINES);
  const shown = kept.reverse().map((l) => `    ${boundName(l, LOG_LINE_WIDTH)}`);
  const text = boundText(shown.join("\n"), LOG_LIMIT, { head: 0.2 });
  return dropped ? `    [… ${dropped} earlier lines cut …]\n${text}` : text;
}

/** How a gate that could not decide is worded under `log`: a fixed word per error, never a figure. */
const ERROR_WORD: Record<GateError, string> = {
  timeout: "timed out",
  crashed: "crashed",
  tampered: "tampered",
  spawn_failed: "could not run",
  unreadable: "gave no readable test results",
  sandbox_unavailable: "could not run",
  too_few_tests: "ran too few tests",
};

/** What a failed gate reads as under `summary` (and `none`, should it ever be asked): the one bit. */
const NOT_PASSED = "not passed";

/**
 * A gate's outcome as the builder may read it. Under `summary` it is one bit, `passed` or `not passed`,
 * whatever the error (a timeout too), exit code, counts or summary: the code under test chooses among
 * failure kinds (crash, timeout, tamper, unreadable results, …) and could spell held-out content with
 * them, a few bits per attempt. Only `log`, which shows the log anyway, names the kind and adds the exit
 * code. The envelope and the events keep every word and figure for the user.
 */
export function feedbackOutcome(
  g: Pick<EventData<"gate_run_finished">, "passed" | "error" | "exit_code">,
  feedback: Feedback,
): string {
  if (g.passed) return "passed";
  if (feedback !== "log") return NOT_PASSED;
  const word = g.error ? ERROR_WORD[g.error] : "failed";
  return g.exit_code !== null ? `${word} (exit ${g.exit_code})` : word;
}
