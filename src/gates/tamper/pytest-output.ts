import type { TamperPlan } from "./adapter.js";
import type { ReportedTest, TestOutcome, TestReport } from "./test-report.js";

const HEADER = /^=+ short test summary info =+\s*$/gm;
const LINE = /^(PASSED|FAILED|ERROR|XPASS|XFAIL|SKIPPED) (?:\[\d+\] )?(.*)$/gm;
// `=== 2 passed, 1 failed in 0.1s ===`, bare under -q.
const COUNT =
  /^(?:=+ )?(\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed|deselected|warnings?)\b.*|no tests ran) in [\d.]+s(?: \([^)]*\))?(?: =+)?\s*$/gm;

/**
 * The node id at the start of a short-summary line. What follows it is ` - message` (` reason` after
 * XPASS), and a parametrised id may hold spaces, dashes and brackets: the id ends at the first `]` after
 * its `[` that is followed by the end of the line or by that separator.
 */
export function nodeIdOf(rest: string, kind: string): string {
  const sep = kind === "XPASS" ? " " : " - ";
  const open = rest.indexOf("[");
  const firstSep = rest.indexOf(sep);
  if (open < 0 || (firstSep >= 0 && firstSep < open))
    return firstSep < 0 ? rest.trimEnd() : rest.slice(0, firstSep);
  for (let i = rest.indexOf("]", open); i >= 0; i = rest.indexOf("]", i + 1)) {
    const after = rest.slice(i + 1);
    if (after.trim() === "" || after.startsWith(sep)) return rest.slice(0, i + 1);
  }
  return rest.trimEnd();
}

/** `tests/test_x.py::Case::test_y[a::b]` → its file, suites and name (`test_y[a::b]`). */
export function splitNodeId(id: string): Omit<ReportedTest, "outcome"> {
  const open = id.indexOf("[");
  const head = open < 0 ? id : id.slice(0, open);
  const parts = head.split("::");
  const file = parts[0] ?? id;
  if (parts.length < 2) return { name: id, suites: [], file };
  const name = `${parts[parts.length - 1] ?? ""}${open < 0 ? "" : id.slice(open)}`;
  return { name, suites: parts.slice(1, -1), file };
}

function outcomeOf(kind: string): TestOutcome {
  if (kind === "PASSED") return "passed";
  if (kind === "SKIPPED" || kind === "XFAIL") return "skipped"; // an expected failure neither passes nor fails
  return "failed";
}

/**
 * Reads pytest's `-rA` short summary (the last one in the output) into per-test identities, checked
 * against the final count line when there is one: a summary listing fewer tests than the count was cut
 * short, and a run with neither is unreadable. A skip is listed by location, not by test.
 */
export function parsePytestOutput(output: string, _plan: TamperPlan): TestReport | null {
  const headers = [...output.matchAll(HEADER)];
  const header = headers[headers.length - 1];
  const final = [...output.matchAll(COUNT)].pop();
  const count = (word: string) => Number(new RegExp(`(\\d+) ${word}\\b`).exec(final?.[1] ?? "")?.[1] ?? 0);
  const tests: ReportedTest[] = [];
  const start = header ? (header.index ?? 0) + header[0].length : output.length;
  const end = final?.index !== undefined && final.index > start ? final.index : undefined;
  const summary = output.slice(start, end);
  for (const m of summary.matchAll(LINE)) {
    const kind = m[1] ?? "";
    const rest = m[2] ?? "";
    if (kind === "SKIPPED" && !/^\S+::/.test(rest)) {
      // `SKIPPED [2] tests/test_x.py:9: reason`: a location standing for the skipped tests there.
      const where = /^\S+/.exec(rest)?.[0] ?? rest;
      tests.push({ name: where, suites: [], file: where.replace(/:\d+:?$/, ""), outcome: "skipped" });
      continue;
    }
    tests.push({ ...splitNodeId(nodeIdOf(rest, kind)), outcome: outcomeOf(kind) });
  }
  if (!final && tests.length === 0) return null;
  const expected = count("passed") + count("failed") + count("errors?") + count("xpassed");
  // The short summary is the per-test channel; when it lists fewer tests than the count line, it was cut.
  if (tests.filter((t) => t.outcome !== "skipped").length < expected) return null;
  return { channel: "summary", tests, silentFiles: [] };
}
