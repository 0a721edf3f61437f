// How the envelope explains a gate's exit code when loopgate's own planted tests (its canary, mutated
// twins) fail on purpose in the gate's run, and how it marks the canary's lines in the log.
import { describe, expect, it } from "vitest";
import { CANARY_LINE_MARK, exitCodeNote, markCanaryLines } from "../../../src/core/run/envelope.js";
import type { GateTamper } from "../../../src/core/task/gate-tamper.js";

function tamper(over: Partial<GateTamper> = {}): GateTamper {
  return {
    check: "auto",
    runner: "node-test",
    channel: "reporter",
    canary: { auto: true, declared: false, tests: ["edge basic 12"], failed_as_expected: true },
    tests: { passed: 3, failed: 0, skipped: 0 },
    floor: { min: 1, source: "default" },
    note: null,
    ...over,
  };
}

describe("exitCodeNote", () => {
  it("a passed gate that exited 1: the canary's exit, named, as expected", () => {
    expect(exitCodeNote({ passed: true, exit_code: 1, tamper: tamper() })).toBe(
      `exit 1 from loopgate's canary test "edge basic 12", which fails on purpose: as expected, every real test passed`,
    );
  });

  it("a passed gate judged by a lock: its mutated twins explain the exit, with the canary when there is one", () => {
    const twins = { planted: 4, failed: 4 };
    expect(
      exitCodeNote({
        passed: true,
        exit_code: 1,
        tamper: tamper({ canary: { auto: false, declared: true }, twins }),
      }),
    ).toBe(
      "exit 1 from loopgate's 4 mutated twin tests, which fail on purpose: as expected, every real test passed",
    );
    expect(exitCodeNote({ passed: true, exit_code: 1, tamper: tamper({ twins }) })).toBe(
      `exit 1 from loopgate's canary test "edge basic 12" and 4 mutated twin tests, which fail on purpose: as expected, every real test passed`,
    );
  });

  it("a run recorded before the canary's names were: the canary still explains a passed gate's exit", () => {
    const old = tamper({ canary: { auto: true, declared: false } });
    expect(exitCodeNote({ passed: true, exit_code: 1, tamper: old })).toBe(
      "exit 1 from loopgate's canary test, which fails on purpose: as expected, every real test passed",
    );
  });

  it("several canary tests are named, three at most", () => {
    const canary = {
      auto: true,
      declared: false,
      tests: ["a 1", "b 2", "c 3", "d 4"],
      failed_as_expected: true,
    };
    expect(exitCodeNote({ passed: true, exit_code: 1, tamper: tamper({ canary }) })).toBe(
      `exit 1 from loopgate's canary tests "a 1", "b 2", "c 3" and 1 more, which fail on purpose: as expected, every real test passed`,
    );
  });

  it("a gate whose real tests failed is a failure: the note says so first, the canary only as well", () => {
    const note = exitCodeNote({
      passed: false,
      exit_code: 1,
      tamper: tamper({ tests: { passed: 1, failed: 2, skipped: 0 }, twins: { planted: 3, failed: 3 } }),
    });
    expect(note).toBe(
      `exit 1: 2 real tests failed; loopgate's canary test "edge basic 12" failed too, as expected`,
    );
  });

  it("a gate that did not pass with no real failure (too few tests) is not explained away", () => {
    const note = exitCodeNote({ passed: false, exit_code: 1, tamper: tamper() }) ?? "";
    expect(note).toContain("the gate did not pass for another reason");
    expect(note).not.toContain("every real test passed");
  });

  it("says nothing where loopgate's tests do not explain the exit code", () => {
    const cases = [
      // The canary did not fail as it must: the summary says the run was tampered with.
      {
        passed: false,
        exit_code: 0,
        tamper: tamper({ canary: { auto: true, declared: false, failed_as_expected: false } }),
      },
      {
        passed: false,
        exit_code: 1,
        tamper: tamper({
          canary: { auto: true, declared: false, failed_as_expected: false },
          tests: { passed: 0, failed: 1, skipped: 0 },
        }),
      },
      // Decided by the exit code alone.
      {
        passed: true,
        exit_code: 0,
        tamper: tamper({ check: "off", canary: { auto: false, declared: false } }),
      },
      {
        passed: false,
        exit_code: 1,
        tamper: tamper({ check: "none", canary: { auto: false, declared: false } }),
      },
      // A passed gate without a canary or twins that exited 0, a static gate, a gate with no tamper entry.
      { passed: true, exit_code: 0, tamper: tamper({ canary: { auto: false, declared: false } }) },
      { passed: true, exit_code: null },
      { passed: false, exit_code: 2 },
    ];
    for (const c of cases) expect(exitCodeNote(c), JSON.stringify(c)).toBeNull();
  });
});

describe("markCanaryLines", () => {
  it("marks each line naming a canary test as a whole name, and nothing else", () => {
    const log = [
      "✔ parses edge basic 123 (0.2ms)",
      "✖ edge basic 12 [/tmp/x/test/a.test.js] (0.5ms)",
      "  Error: order-long-41 !== extra-misc-77",
      "✔ edge basic (0.1ms)",
      "ℹ fail 1",
      "✖ edge basic 12 [/tmp/x/test/a.test.js] (0.5ms)",
    ].join("\n");
    const out = markCanaryLines(log, ["edge basic 12"]).split("\n");
    expect(out.map((l) => l.startsWith(CANARY_LINE_MARK))).toEqual([false, true, false, false, false, true]);
    expect(out.map((l) => l.replace(CANARY_LINE_MARK, "")).join("\n")).toBe(log);
  });

  it("a name with characters a regular expression treats specially is matched literally", () => {
    const log = "not ok 1 a.b (1)+\nnot ok 2 aXb (1)+";
    expect(markCanaryLines(log, ["a.b (1)+"])).toBe(
      `${CANARY_LINE_MARK}not ok 1 a.b (1)+\nnot ok 2 aXb (1)+`,
    );
  });

  it("leaves the log as it is without canary names", () => {
    expect(markCanaryLines("✖ x\n", [])).toBe("✖ x\n");
    expect(markCanaryLines("✖ x\n", [" "])).toBe("✖ x\n");
  });
});
