import { describe, expect, it } from "vitest";
import type { EventData } from "../../src/core/events.js";
import { isHedgedClaim } from "../../src/core/hedge.js";
import { buildRequiredFix } from "../../src/core/required-fix.js";
import { renderTemplate, templateNames } from "../../src/core/template.js";

const gate = (
  id: string,
  passed: boolean,
  log: string,
  error: EventData<"gate_run_finished">["error"] = null,
): EventData<"gate_run_finished"> => ({
  attempt: 1,
  gate_id: id,
  passed,
  exit_code: passed ? 0 : 1,
  timed_out: error === "timeout",
  error,
  duration_ms: 5,
  log_excerpt: log,
  summary: "",
});

describe("required fix", () => {
  const gates = [
    gate("visible", false, "AssertionError: expected 'a-b'"),
    gate("hidden", false, "SECRET expected value 42"),
    gate("summary-only", false, "not shown either", "timeout"),
    gate("green", true, "ok"),
  ];
  const text = buildRequiredFix({
    attempt: 1,
    gates,
    feedback: { visible: "log", hidden: "none", "summary-only": "summary", green: "log" },
    findings: [
      {
        attempt: 1,
        code: "protected_path_modified",
        severity: "blocking",
        path: "test/a.test.js",
        detail: "protected file changed",
      },
    ],
    deliverables: ["src/**"],
  });

  it("shows a log only where the gate's feedback is log", () => {
    expect(text).toContain("AssertionError: expected 'a-b'");
    expect(text).not.toContain("not shown either");
    expect(text).toContain("check summary-only: timed out");
  });

  it("never names or quotes a gate whose feedback is none", () => {
    expect(text).not.toContain("hidden");
    expect(text).not.toContain("SECRET");
    expect(text).toContain("1 further check failed (details withheld)");
  });

  it("names blocking findings and the deliverables, and says nothing of passing gates", () => {
    expect(text).toContain("protected_path_modified at test/a.test.js");
    expect(text).toContain("deliverables: src/**");
    expect(text).not.toContain("green");
  });

  it("bounds a long log to its tail", () => {
    const long = buildRequiredFix({
      attempt: 2,
      gates: [gate("v", false, `${"x".repeat(10_000)}END`)],
      feedback: { v: "log" },
      findings: [],
      deliverables: [],
    });
    expect(long.length).toBeLessThan(2600);
    expect(long).toContain("END");
  });
});

describe("template parameters", () => {
  it("substitutes ${name}, keeps other dollars and braces, and unescapes $$", () => {
    expect(renderTemplate('curl -w %{http_code} ${gate_env}/x $HOME $$ {"a":1}', { gate_env: "/g" })).toBe(
      'curl -w %{http_code} /g/x $HOME $ {"a":1}',
    );
    expect(templateNames("${a} ${b} $$ ${c")).toEqual(["a", "b"]);
  });
  it("throws on a parameter it was not given", () => {
    expect(() => renderTemplate("${nope}", {})).toThrow(/nope/);
  });
});

describe("hedge detection", () => {
  it("flags a completion claim that hedges, not a plain one or a plain hedge", () => {
    expect(isHedgedClaim("Fixed the bug, it should work now")).toBe(true);
    expect(isHedgedClaim("I believe all tests pass")).toBe(true);
    expect(isHedgedClaim("Fixed the bug; node --test exits 0")).toBe(false);
    expect(isHedgedClaim("I think the parser is odd")).toBe(false);
  });
});
