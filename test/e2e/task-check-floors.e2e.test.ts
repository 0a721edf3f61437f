// `loopgate task check` records the count of real tests the oracle passed per gate (the floor for runs
// without a lock); later runs of the same task file hold to it, and --strict refuses gates loopgate
// cannot tamper-check. Every check runs on a private copy of the example: it writes a lock beside it.
import { afterAll, describe, expect, it } from "vitest";
import { copyExample, loopgate, parseStdout, removeTemps, show, tempDir } from "./cli.js";

afterAll(removeTemps);

interface CheckJson {
  ok: boolean;
  gates: {
    id: string;
    kind: string;
    runner: string | null;
    check: string;
    tests: number | null;
    warnings: string[];
  }[];
  test_floors_recorded: Record<string, number>;
  warnings: string[];
  problems: string[];
}

// Counted by hand from examples/js-slugify/repo/test/slugify.test.js (7 test() calls) and
// examples/js-slugify/heldout/heldout-test/slugify.heldout.test.js (8 test() calls).
const VISIBLE_TESTS = 7;
const HELDOUT_TESTS = 8;

describe("task check and test floors", () => {
  it("records the oracle's per-gate counts, and the next run holds to them (source task_check)", async () => {
    const store = tempDir("loopgate-e2e-floors-");
    const task = copyExample("js-slugify");
    const check = await loopgate(["task", "check", task, "--json", "--store", store]);
    expect(check.code, show(check)).toBe(0);
    const c = parseStdout<CheckJson>(check);
    expect(c.test_floors_recorded).toEqual({
      "visible-tests": VISIBLE_TESTS,
      "heldout-tests": HELDOUT_TESTS,
    });
    expect(c.gates.find((g) => g.id === "heldout-tests")).toMatchObject({
      runner: "node-test",
      check: "identity+twins",
      tests: HELDOUT_TESTS,
    });
    expect(c.gates.find((g) => g.id === "no-debug-output")?.kind).toBe("static");
    // Every held-out test got twins: nothing to warn about, not even with --strict.
    expect(c.warnings).toEqual([]);

    const run = await loopgate(["run", task, "--oracle", "--json", "--store", store]);
    expect(run.code, show(run)).toBe(0);
    const env = parseStdout<{ gates: { id: string; tamper?: { floor: { min: number; source: string } } }[] }>(
      run,
    );
    expect(env.gates.find((g) => g.id === "visible-tests")?.tamper?.floor).toEqual({
      min: VISIBLE_TESTS,
      source: "task_check",
    });
  });

  it("without a task check the floor is 1 (source default)", async () => {
    const run = await loopgate([
      "run",
      copyExample("js-slugify"),
      "--oracle",
      "--json",
      "--store",
      tempDir(),
    ]);
    expect(run.code, show(run)).toBe(0);
    const env = parseStdout<{ gates: { id: string; tamper?: { floor: unknown } }[] }>(run);
    expect(env.gates.find((g) => g.id === "heldout-tests")?.tamper?.floor).toEqual({
      min: 1,
      source: "default",
    });
  });

  it("warns about gates it cannot tamper-check, and --strict makes that an error (exit 1)", async () => {
    const store = tempDir("loopgate-e2e-strict-");
    const task = copyExample("sh-csvcol");
    const plain = await loopgate(["task", "check", task, "--json", "--store", store]);
    const p = parseStdout<CheckJson>(plain);
    const visible = p.gates.find((g) => g.id === "visible-tests");
    expect(visible).toMatchObject({ check: "exit-code", tests: null });
    expect(visible?.warnings.join(" ")).toContain("canary: ./canary");
    expect(plain.code, show(plain)).toBe(p.problems.length ? 1 : 0);

    const strict = await loopgate(["task", "check", task, "--strict", "--store", store]);
    expect(strict.code, show(strict)).toBe(1);
    expect(strict.stdout).toContain("gate visible-tests: no per-test results");
    expect(strict.stdout).toContain("(--strict)");
  });
});
