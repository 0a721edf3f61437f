import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { EventData } from "../../../src/core/events/loopgate-event.js";
import { isHedgedClaim } from "../../../src/core/kernel/hedge.js";
import { renderTemplate, templateNames } from "../../../src/core/kernel/template.js";
import { buildRequiredFix, feedbackOutcome } from "../../../src/core/run/required-fix.js";

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
    // A timeout is one more way of not passing: under summary it reads like any other failure.
    expect(text).toContain("- check summary-only: not passed\n");
    expect(text).not.toContain("timed out");
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

describe("summary feedback carries one bit", () => {
  // Exit codes a gate's code could choose to spell a held-out byte with, and the signals bwrap reports as 128+N.
  const codes = [2, 65, 97, 113, 127, 137, 200, 255];
  const failing = (exit_code: number | null, error: EventData<"gate_run_finished">["error"]) => ({
    ...gate("heldout", false, `leaked ${exit_code} via log`, error),
    exit_code,
    duration_ms: 4321,
    summary: `exit ${exit_code} after 4321 ms, 17 tests`,
  });
  const fixFor = (g: EventData<"gate_run_finished">, fb: "summary" | "log") =>
    buildRequiredFix({ attempt: 1, gates: [g], feedback: { heldout: fb }, findings: [], deliverables: [] });

  // Every GateError value, with the word `log` gives it (written out here, not read from the code).
  const words: Record<NonNullable<EventData<"gate_run_finished">["error"]>, string> = {
    timeout: "timed out",
    crashed: "crashed",
    tampered: "tampered",
    spawn_failed: "could not run",
    unreadable: "gave no readable test results",
    sandbox_unavailable: "could not run",
    too_few_tests: "ran too few tests",
  };
  const errors = Object.keys(words) as (keyof typeof words)[];

  for (const code of codes)
    it(`a gate that exited ${code} reads "not passed", with no ${code} in the required fix`, () => {
      const text = fixFor(failing(code, null), "summary");
      expect(text).toContain("- check heldout: not passed\n");
      expect(text).not.toContain(String(code));
      expect(text).not.toMatch(/4321|17 tests|exit|failed/);
    });

  it("summary says exactly `not passed` for every gate error and for a plain failure; log says the word", () => {
    for (const error of [...errors, null]) {
      const g = { passed: false, error, exit_code: null };
      expect(feedbackOutcome(g, "summary")).toBe("not passed");
      expect(feedbackOutcome(g, "log")).toBe(error === null ? "failed" : words[error]);
    }
  });

  it("every gate error reads `not passed` in the required fix under summary, with no word, code or signal", () => {
    for (const error of errors) {
      const text = fixFor(failing(137, error), "summary");
      expect(text).toContain("- check heldout: not passed\n");
      expect(text).not.toContain(words[error]);
      expect(text).not.toMatch(/137|SIGKILL|4321/);
    }
  });

  it("log feedback, which shows the log anyway, keeps the word and adds the exit code", () => {
    expect(fixFor(failing(65, null), "log")).toContain("- check heldout: failed (exit 65)");
    expect(fixFor(failing(65, null), "log")).toContain("leaked 65 via log");
    expect(fixFor(failing(124, "timeout"), "log")).toContain("- check heldout: timed out (exit 124)");
    expect(fixFor(failing(null, "tampered"), "log")).toContain("- check heldout: tampered\n");
    expect(feedbackOutcome({ passed: true, error: null, exit_code: 0 }, "summary")).toBe("passed");
    expect(feedbackOutcome({ passed: true, error: null, exit_code: 0 }, "log")).toBe("passed");
  });

  it("property: under summary a failed gate's required fix is one text, whatever the gate reported", () => {
    const reference = fixFor(failing(1, null), "summary");
    fc.assert(
      fc.property(
        fc.constantFrom(...errors, null),
        fc.option(fc.integer({ min: -255, max: 1_000_000 }), { nil: null }),
        fc.nat(),
        fc.string(),
        fc.string(),
        fc.boolean(),
        (error, exit_code, duration_ms, summary, log_excerpt, timed_out) => {
          const g: EventData<"gate_run_finished"> = {
            ...gate("heldout", false, log_excerpt, error),
            exit_code,
            duration_ms,
            summary,
            timed_out,
          };
          expect(fixFor(g, "summary")).toBe(reference);
        },
      ),
    );
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
