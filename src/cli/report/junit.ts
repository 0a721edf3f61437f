import type { Envelope } from "../../core/run/envelope.js";

/**
 * Characters XML 1.0 cannot carry at all, not even escaped: C0 controls other than tab, LF and CR,
 * lone surrogates, U+FFFE and U+FFFF. A gate log may contain any byte; these are removed.
 */
const NOT_XML = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;

/** Text content: `&`, `<` and `>` escaped (so `]]>` cannot occur), characters XML forbids removed. */
export function xmlText(s: string): string {
  return s.replace(NOT_XML, "").replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** An attribute value (double-quoted): as text, plus quotes, and tab/newlines kept as character references. */
export function xmlAttr(s: string): string {
  return xmlText(s)
    .replace(/"/g, "&quot;")
    .replace(/\t/g, "&#9;")
    .replace(/\n/g, "&#10;")
    .replace(/\r/g, "&#13;");
}

const seconds = (ms: number) => (Math.max(0, ms) / 1000).toFixed(3);

interface Case {
  name: string;
  time_ms: number;
  outcome: { kind: "failure" | "error"; type: string; message: string; body: string } | null;
  /** What a passed case prints (`system-out`): why its exit code is not 0, when loopgate's canary explains it. */
  out?: string;
}

/** The test cases of a run: one per gate of the final attempt, then the run's verdict. */
export function junitCases(env: Envelope): Case[] {
  const cases: Case[] = env.gates
    .filter((g) => g.attempt === env.attempts)
    .map((g) => {
      if (g.passed)
        return {
          name: g.id,
          time_ms: g.duration_ms,
          outcome: null,
          ...(g.exit_code_note ? { out: g.exit_code_note } : {}),
        };
      // A gate that could not decide (timeout, crash, tampering…) is an error; one that ran and said no, a failure.
      const undecided = g.timed_out || g.error !== null;
      const why = g.timed_out
        ? "timed out"
        : g.error !== null
          ? g.error
          : (g.exit_code_note ?? `exit ${g.exit_code === null ? "without a code" : g.exit_code}`);
      return {
        name: g.id,
        time_ms: g.duration_ms,
        outcome: {
          kind: undecided ? "error" : "failure",
          type: g.timed_out ? "timeout" : (g.error ?? "gate_failed"),
          message: `gate ${g.id} did not pass (${why})`,
          body: g.log_excerpt,
        },
      };
    });
  // The verdict is a case of its own, so that a run whose gates all passed but which still did not
  // succeed (judge rejection, blocking finding, infrastructure failure) never reads as green in CI.
  const blocking = env.findings
    .filter((f) => f.severity === "blocking" && f.attempt === env.attempts)
    .map((f) => `${f.code}${f.path ? ` ${f.path}` : ""}: ${f.detail}`);
  const body = [`${env.status}: ${env.reason}`, ...blocking].join("\n");
  cases.push({
    name: "verdict",
    time_ms: env.audit.latency_ms,
    outcome:
      env.status === "SUCCESS"
        ? null
        : {
            kind: env.status === "TOOL_FAILURE" ? "error" : "failure",
            type: env.status,
            message: env.reason,
            body,
          },
  });
  return cases;
}

/**
 * A JUnit XML report of one run, in the Ant/Jenkins shape CI systems read (`testsuites` > `testsuite`
 * with `properties` > `testcase` with `failure`/`error`); valid against test/fixtures/junit/junit.xsd.
 * Pure: the same envelope gives the same bytes.
 */
export function renderJunit(env: Envelope): string {
  const cases = junitCases(env);
  const failures = cases.filter((c) => c.outcome?.kind === "failure").length;
  const errors = cases.filter((c) => c.outcome?.kind === "error").length;
  const time = seconds(env.audit.latency_ms);
  const classname = `loopgate.${env.task_id}`;
  const props: [string, string][] = [
    ["run_id", env.run_id],
    ["task_id", env.task_id],
    ["status", env.status],
    ["reason", env.reason],
    ["attempts", String(env.attempts)],
    ["sandbox", env.sandbox],
    ...(env.judge ? ([["judge", env.judge.verdict]] as [string, string][]) : []),
  ];
  const counts = `tests="${cases.length}" failures="${failures}" errors="${errors}"`;
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="loopgate" ${counts} time="${time}">`,
    `  <testsuite name="${xmlAttr(classname)}" ${counts} skipped="0" time="${time}">`,
    "    <properties>",
    ...props.map(([n, v]) => `      <property name="${n}" value="${xmlAttr(v)}"/>`),
    "    </properties>",
  ];
  for (const c of cases) {
    const head = `    <testcase name="${xmlAttr(c.name)}" classname="${xmlAttr(classname)}" time="${seconds(c.time_ms)}"`;
    if (!c.outcome) {
      if (c.out)
        lines.push(`${head}>`, `      <system-out>${xmlText(c.out)}</system-out>`, "    </testcase>");
      else lines.push(`${head}/>`);
      continue;
    }
    const o = c.outcome;
    lines.push(
      `${head}>`,
      `      <${o.kind} type="${xmlAttr(o.type)}" message="${xmlAttr(o.message)}">${xmlText(o.body)}</${o.kind}>`,
      "    </testcase>",
    );
  }
  lines.push("  </testsuite>", "</testsuites>", "");
  return lines.join("\n");
}
