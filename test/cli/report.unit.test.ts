// The CI report renderers are pure functions of the envelope: what they say, and how they escape
// whatever a builder or a gate printed.
import { describe, expect, it } from "vitest";
import { junitCases, renderJunit, xmlAttr, xmlText } from "../../src/cli/report/junit.js";
import { mdFence, mdInline, renderMarkdown } from "../../src/cli/report/markdown.js";
import { envelope, gate } from "./envelopes.js";

const NASTY = "ok\u0000\u0001\u0007\u001b[31m red ]]> <b>&amp;\" ' \uD800 \uFFFE\n\ttab\r\nend";

describe("XML escaping", () => {
  it("removes the characters XML 1.0 cannot carry and escapes markup, so `]]>` cannot occur", () => {
    const t = xmlText(NASTY);
    // Independent rule: XML 1.0 Char production (tab, LF, CR, U+0020–U+D7FF, U+E000–U+FFFD, astral).
    for (const ch of t) {
      const c = ch.codePointAt(0) as number;
      const allowed =
        c === 9 ||
        c === 10 ||
        c === 13 ||
        (c >= 0x20 && c <= 0xd7ff) ||
        (c >= 0xe000 && c <= 0xfffd) ||
        c >= 0x10000;
      expect(allowed, `U+${c.toString(16)}`).toBe(true);
    }
    expect(t).not.toContain("]]>");
    expect(t).not.toMatch(/<|>/);
    expect(t).toContain("]]&gt;");
    expect(t).toContain("&amp;amp;");
    expect(t).toContain("[31m red"); // the printable rest of an ANSI sequence stays
  });

  it("keeps quotes and line breaks of an attribute as references", () => {
    const a = xmlAttr('say "hi"\nnext\tcol');
    expect(a).toBe("say &quot;hi&quot;&#10;next&#9;col");
  });
});

describe("JUnit cases", () => {
  const env = envelope({
    status: "ESCALATED",
    reason: "attempt cap reached (2 of 2)",
    attempts: 2,
    gates: [
      gate("unit", { passed: false, exit_code: 1, log_excerpt: "1 failing" }),
      gate("unit", { attempt: 2, passed: false, exit_code: 1, log_excerpt: "still failing" }),
      gate("lint", { attempt: 2 }),
      gate("slow", { attempt: 2, passed: false, exit_code: null, timed_out: true, error: "timeout" }),
    ],
  });

  it("one case per gate of the final attempt, then the verdict", () => {
    const cases = junitCases(env);
    expect(cases.map((c) => c.name)).toEqual(["unit", "lint", "slow", "verdict"]);
    expect(cases.map((c) => c.outcome?.kind ?? "pass")).toEqual(["failure", "pass", "error", "failure"]);
    expect(cases[0]?.outcome?.body).toBe("still failing"); // the final attempt's log, not the first's
    expect(cases[3]?.outcome?.message).toBe("attempt cap reached (2 of 2)");
  });

  it("a run whose gates all passed but which did not succeed is never green", () => {
    const rejected = envelope({ status: "ESCALATED", reason: "the judge rejected", gates: [gate("unit")] });
    expect(
      junitCases(rejected)
        .filter((c) => c.outcome)
        .map((c) => c.name),
    ).toEqual(["verdict"]);
    const broken = envelope({ status: "TOOL_FAILURE", reason: "the sandbox is unavailable", gates: [] });
    expect(junitCases(broken)).toEqual([
      expect.objectContaining({ name: "verdict", outcome: expect.objectContaining({ kind: "error" }) }),
    ]);
    expect(junitCases(envelope({ gates: [gate("unit")] })).every((c) => c.outcome === null)).toBe(true);
  });

  it("the document's counts agree with its cases, and it carries run id, status and reason", () => {
    const xml = renderJunit(env);
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites')).toBe(true);
    expect(xml).toContain('tests="4" failures="2" errors="1"');
    expect(xml).toContain(`<property name="run_id" value="${env.run_id}"/>`);
    expect(xml).toContain('<property name="status" value="ESCALATED"/>');
    expect(xml).toContain('<property name="reason" value="attempt cap reached (2 of 2)"/>');
    expect((xml.match(/<testcase /g) ?? []).length).toBe(4);
  });
});

describe("Markdown summary", () => {
  it("shows status, reason, the final attempt's gates, failed logs, findings and audit", () => {
    const md = renderMarkdown(
      envelope({
        status: "ESCALATED",
        reason: "attempt cap reached (1 of 1)",
        gates: [
          gate("unit", { passed: false, exit_code: 1, log_excerpt: "AssertionError: 1 !== 2" }),
          gate("lint"),
        ],
        findings: [
          {
            attempt: 1,
            code: "protected_changed",
            severity: "blocking",
            path: "test/a.js",
            detail: "restored",
          },
        ],
      }),
    );
    expect(md).toMatch(/^## ❌ loopgate: ESCALATED · demo-task\n/);
    expect(md).toContain("**Reason:** attempt cap reached (1 of 1)");
    expect(md).toContain("| unit | ❌ failed | 1 | 0.1 s |");
    expect(md).toContain("| lint | ✅ passed | 0 | 0.1 s |");
    expect(md).toContain("AssertionError: 1 !== 2");
    expect(md).toContain("| 1 | blocking | protected\\_changed | test/a.js | restored |");
    expect(md).toContain("### Audit");
    expect(md).toContain("| 0 | 1.5 s | 12 | — | — | no |");
  });

  it("neutralizes HTML, table breaks and Markdown in builder-controlled text", () => {
    const cell = mdInline("<script>x</script> | [link](http://e) **b**\nline2");
    expect(cell).not.toMatch(/<|\n/);
    expect(cell).not.toMatch(/(^|[^\\])\|/);
    expect(cell).toContain("\\[link\\]");
    expect(cell).toContain("\\*\\*b\\*\\*");
  });

  it("a log cannot close its fence, and a long log is cut with the cut said", () => {
    const block = mdFence("before\n````\n</details>\nafter");
    const fence = block.split("\n")[0]?.replace("text", "") ?? "";
    expect(fence.length).toBeGreaterThan(4);
    expect(block.endsWith(`\n${fence}`)).toBe(true);
    const long = mdFence("x".repeat(10_000));
    expect(long).toContain("characters cut");
    expect(long.length).toBeLessThan(5000);
  });
});
