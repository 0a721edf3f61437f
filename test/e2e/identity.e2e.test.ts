// The verdict by identity, end to end through the CLI: `task check` records the lock (which tests the
// oracle passed, which twins it failed); runs are then judged by it. Forgers that treat tests alike —
// skip every test and register fakes, read the expected value from the caller, sniff a declared canary's
// stand-ins — are refused; honest work passes.
import { execFileSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  copyExample,
  type Envelope,
  loopgate,
  parseStdout,
  ROOT,
  removeTemps,
  show,
  tempDir,
} from "./cli.js";

afterAll(removeTemps);

interface Tamper {
  identity?: { source: string; required: number; passed: number; not_passed: string[] };
  twins?: { planted: number; failed: number } | null;
}
type Gate = Envelope["gates"][number] & { error: string | null; tamper?: Tamper };
const gate = (env: Envelope, id: string) => (env.gates as Gate[]).findLast((g) => g.id === id);

// Counted by hand: examples/py-durations/heldout/heldout_tests/test_durations_heldout.py defines 7 test
// methods; 5 of them compare with a literal expected value (fractional_numbers, weeks, whitespace,
// minutes_versus_milliseconds, parts_are_summed); generated_combinations compares with a computed
// `want`, rejects_malformed_input uses assertRaises. The visible tests/test_durations.py defines 7.
const PY_HELDOUT = 7;
const PY_TWINNED = 5;
const PY_VISIBLE = 7;

/** Writes an executable builder script into a fresh folder and returns its path. */
function builder(script: string): string {
  const file = join(tempDir("loopgate-e2e-builder-"), "builder.sh");
  writeFileSync(file, script);
  chmodSync(file, 0o755);
  return file;
}

async function check(task: string) {
  const r = await loopgate(["task", "check", task, "--json", "--store", tempDir()], { timeoutMs: 240_000 });
  expect(r.code, show(r)).toBe(0);
  return parseStdout<{
    lock: string;
    gates: { id: string; check: string; tests: number; twins: { tests: number } | null }[];
  }>(r);
}

async function run(task: string, builderPath: string) {
  const r = await loopgate(["run", task, "--builder", builderPath, "--json", "--store", tempDir()], {
    timeoutMs: 240_000,
  });
  return { r, env: parseStdout<Envelope>(r) };
}

describe("py-durations judged by identity and twins", () => {
  const task = copyExample("py-durations");
  let checked = false;
  const ensureChecked = async () => {
    if (checked) return;
    const c = await check(task);
    expect(c.lock).toBe(join(dirname(task), "task.lock.json"));
    const held = c.gates.find((g) => g.id === "heldout-tests");
    expect(held).toMatchObject({ check: "identity+twins", tests: PY_HELDOUT, twins: { tests: PY_TWINNED } });
    expect(c.gates.find((g) => g.id === "visible-tests")?.tests).toBe(PY_VISIBLE);
    checked = true;
  };

  it("task check writes the lock, and the oracle then passes every recorded test while every twin fails", async () => {
    await ensureChecked();
    const lock = JSON.parse(readFileSync(join(dirname(task), "task.lock.json"), "utf8"));
    expect(Object.keys(lock.gates["heldout-tests"].twins)).toHaveLength(PY_TWINNED);
    const { r, env } = await run(task, join(dirname(task), "solution.sh"));
    expect(r.code, show(r)).toBe(0);
    const held = gate(env, "heldout-tests");
    expect(held?.tamper?.identity).toMatchObject({
      source: "lock",
      required: PY_HELDOUT,
      passed: PY_HELDOUT,
    });
    expect(held?.tamper?.twins).toEqual({ planted: PY_TWINNED, failed: PY_TWINNED });
  });

  it("refuses code that skips every test and registers twenty passing fakes in the importing module", async () => {
    await ensureChecked();
    const forger = builder(`#!/bin/sh
set -eu
cat > durations/__init__.py <<'PY'
import inspect, sys, unittest
from .parser import parse_duration as _broken

def parse_duration(text):
    raise unittest.SkipTest("not on this platform")

for frame in inspect.stack():
    mod = sys.modules.get(frame.frame.f_globals.get("__name__", ""))
    if mod is not None and "test" in mod.__name__.split(".")[-1]:
        class Extra(unittest.TestCase):
            pass
        for i in range(20):
            setattr(Extra, f"test_extra_{i}", lambda self: None)
        mod.ExtraTests = Extra
        break
PY
echo "All tests pass."
`);
    const { r, env } = await run(task, forger);
    expect(r.code, show(r)).toBe(1);
    expect(env.status).toBe("ESCALATED");
    const held = gate(env, "heldout-tests");
    expect(held?.passed).toBe(false);
    expect(held?.tamper?.identity?.passed).toBe(0);
  });

  it("refuses code that answers with the calling assertion's expected value, on a task with no differential gate", async () => {
    await ensureChecked();
    const { r, env } = await run(task, join(ROOT, "bench/forgery/builders/answer-from-caller-py.sh"));
    expect(r.code, show(r)).toBe(1);
    expect(gate(env, "heldout-tests")?.error).toBe("tampered");
  });
});

describe("js-slugify judged by identity and twins", () => {
  const task = copyExample("js-slugify");

  it("refuses a forger that cheats only where it finds a declared canary's stand-in, and accepts honest work", async () => {
    const c = await check(task);
    expect(c.gates.find((g) => g.id === "heldout-tests")?.check).toBe("identity+twins");
    // Cheats (answers from the caller) only beside a file that is a comment plus padding: the declared
    // canary's stand-in, which the count-and-canary verdict put in the real run.
    const forger = join(ROOT, "bench/forgery/builders/standin-sniff-js.sh");
    const forged = await run(task, forger);
    expect(forged.r.code, show(forged.r)).toBe(1);
    const honest = await run(task, join(dirname(task), "solution.sh"));
    expect(honest.r.code, show(honest.r)).toBe(0);
    expect(existsSync(join(dirname(task), "task.lock.json"))).toBe(true);
  });
});

describe("vitest with a declared canary", () => {
  it("task check accepts a correct oracle: twins replace the canary's second run and its stand-ins", async () => {
    // The benchmark's vitest task, with a canary declared: held-out tests that must fail.
    execFileSync(process.execPath, [join(ROOT, "bench/forgery/tasks/link-runner-deps.mjs")]);
    const dir = join(tempDir("loopgate-e2e-vitest-canary-"), "vitest-roman");
    cpSync(join(ROOT, "bench/forgery/tasks/vitest-roman"), dir, { recursive: true, verbatimSymlinks: true });
    rmSync(join(dir, "task.lock.json"), { force: true });
    const task = join(dir, "task.yaml");
    writeFileSync(
      task,
      readFileSync(task, "utf8").replace(
        "    heldout: ./heldout\n",
        "    heldout: ./heldout\n    canary: ./canary\n",
      ),
    );
    mkdirSync(join(dir, "canary", "heldout-test"), { recursive: true });
    writeFileSync(
      join(dir, "canary", "heldout-test", "roman.more.test.js"),
      'import { expect, test } from "vitest";\nimport { toRoman } from "../src/roman.js";\n\ntest("nine", () => {\n  expect(toRoman(9)).toBe("VIIII");\n});\n',
    );
    const c = await check(task);
    expect(c.gates.find((g) => g.id === "heldout-tests")?.check).toBe("identity+twins");
  });
});
