import { mkdirSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { TamperPlan } from "../../../src/gates/tamper/adapter.js";
import { jest } from "../../../src/gates/tamper/jest.js";
import { pytest, unittest } from "../../../src/gates/tamper/python.js";
import { recogniseRunner } from "../../../src/gates/tamper/runners.js";

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "lg-runners-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("recogniseRunner", () => {
  test.each([
    [["node", "--test", "test/"], "node-test"],
    [["/usr/bin/node", "--test"], "node-test"],
    [["python3", "-m", "unittest", "discover", "-s", "tests"], "unittest"],
    [["python3.11", "-m", "unittest"], "unittest"],
    [["python3", "-m", "pytest", "-q"], "pytest"],
    [["pytest", "tests"], "pytest"],
    [["go", "test", "./..."], "go-test"],
    [["cargo", "test"], "cargo-test"],
    [["npx", "vitest", "run"], "vitest"],
    [["npx", "--yes", "jest"], "jest"],
    [["node", "node_modules/vitest/vitest.mjs", "run"], "vitest"],
    [["node", "node_modules/.bin/jest"], "jest"],
    [["npx", "mocha"], "mocha"],
    [["node_modules/.bin/tape", "test/*.js"], "tape"],
  ])("%j is %s", (argv, id) => {
    expect(recogniseRunner(argv)?.adapter.id).toBe(id);
  });

  test.each([
    [["sh", "tests/run.sh"]],
    [["node", "test/run.js"]],
    [["python3", "tests/run.py"]],
    [["go", "vet", "./..."]],
    [["make", "test"]],
  ])("%j is not a runner loopgate knows", (argv) => {
    expect(recogniseRunner(argv)).toBeNull();
  });
});

const plan = (p: TamperPlan | string): TamperPlan => {
  if (typeof p === "string") throw new Error(p);
  return p;
};

/** A Python runner's plan input with loopgate's canary planted (no lock, so no twins). */
const pyInput = (argv: string[], offset: number) => ({
  argv,
  offset,
  gateEnv: dir,
  privateDir: join(dir, "private"),
  reportPath: "/dev/fd/3",
  canary: true,
  renamed: new Map<string, string[]>(),
});

describe("unittest", () => {
  test("a -k selection keeps the canary with a pattern of its own", () => {
    const p = plan(unittest.plan(pyInput(["python3", "-m", "unittest", "-k", "fast"], 3)));
    const mod = (p.files[0]?.path ?? "").replace(/^.*\/|\.py$/g, "");
    expect(p.argv.slice(3)).toEqual(["-k", "fast", "-k", mod, "-v"]);
  });

  test("discovery gets a canary module named by its pattern, and -v", () => {
    mkdirSync(join(dir, "tests"), { recursive: true });
    const p = plan(
      unittest.plan(pyInput(["python3", "-m", "unittest", "discover", "-s", "tests", "-p", "*_test.py"], 3)),
    );
    expect(p.argv.slice(0, 5)).toEqual(["python3", "-m", "unittest", "discover", "-v"]);
    expect(p.files[0]?.path).toMatch(new RegExp(`^${dir}/tests/\\w+_test\\.py$`));
    expect(p.canary?.tests.length).toBeGreaterThan(5);
  });

  const out = (canary: string[]) =>
    [
      "test_small (tests.test_add.AddTest.test_small) ... ok",
      "test_zero (tests.test_add.AddTest.test_zero)",
      "Adds zero. ... ok",
      "tests.test_gone (unittest.loader.ModuleSkipped.tests.test_gone) ... skipped 'not here'",
      ...canary.map((c) => `${c} (tests.test_x.X.${c}) ... FAIL`),
      "",
      ...canary.flatMap((c) => [
        "=".repeat(70),
        `FAIL: ${c} (tests.test_x.X.${c})`,
        "-".repeat(70),
        "AssertionError",
      ]),
      "-".repeat(70),
      `Ran ${3 + canary.length} tests in 0.002s`,
      "",
      `FAILED (failures=${canary.length}, skipped=1)`,
    ].join("\n");

  test("reads passes (also with a docstring line), failures by name and a module skipped as a whole", () => {
    const p = plan(unittest.plan(pyInput(["python3", "-m", "unittest"], 3)));
    const canary = p.canary?.tests ?? [];
    const r = unittest.parse(out(canary), null, p);
    expect(r?.tests.filter((t) => t.outcome === "passed").map((t) => [t.file, ...t.suites, t.name])).toEqual([
      ["tests/test_add.py", "AddTest", "test_small"],
      ["tests/test_add.py", "AddTest", "test_zero"],
    ]);
    expect(
      r?.tests
        .filter((t) => t.outcome === "failed")
        .map((t) => t.name)
        .sort(),
    ).toEqual([...canary].sort());
    expect(r?.silentFiles).toEqual(["tests/test_gone.py"]);
  });

  test("no summary (the process ended before printing it) is unreadable", () => {
    const p = plan(unittest.plan(pyInput(["python3", "-m", "unittest"], 3)));
    expect(unittest.parse("test_small (a.B.test_small) ... ok\n", null, p)).toBeNull();
  });
});

const SUMMARY = "=========================== short test summary info ============================";

describe("pytest", () => {
  test("-x stops at the first failure and cannot be instrumented", () => {
    expect(pytest.plan(pyInput(["pytest", "-x"], 1))).toContain("-x");
  });

  test("reads the -rA short summary, and refuses one that lists fewer tests than the count line", () => {
    const p = plan(pytest.plan(pyInput(["pytest"], 1)));
    const lines = [
      SUMMARY,
      "PASSED tests/test_a.py::test_one",
      "PASSED tests/test_a.py::TestB::test_two",
      "SKIPPED [1] tests/test_a.py:9: later",
      "FAILED tests/test_z.py::test_c - AssertionError",
      "========= 1 failed, 2 passed, 1 skipped in 0.03s =========",
    ];
    const r = pytest.parse(lines.join("\n"), null, p);
    expect(r?.tests.map((t) => [t.file, t.suites, t.name, t.outcome])).toEqual([
      ["tests/test_a.py", [], "test_one", "passed"],
      ["tests/test_a.py", ["TestB"], "test_two", "passed"],
      ["tests/test_a.py", [], "tests/test_a.py:9:", "skipped"],
      ["tests/test_z.py", [], "test_c", "failed"],
    ]);
    expect(pytest.parse([SUMMARY, ...lines.slice(2)].join("\n"), null, p)).toBeNull();
  });
});

describe("quiet pytest and failfast unittest", () => {
  test("pytest -q prints a bare count line and -qq none: the short summary is read either way", () => {
    const p = plan(pytest.plan(pyInput(["pytest", "-q"], 1)));
    const summary = [SUMMARY, "PASSED tests/test_x.py::test_a", "FAILED tests/test_x.py::test_b - assert 0"];
    const quiet = pytest.parse([...summary, "1 failed, 1 passed in 0.01s"].join("\n"), null, p);
    const quieter = pytest.parse(summary.join("\n"), null, p);
    for (const r of [quiet, quieter])
      expect(r?.tests.map((t) => [t.name, t.outcome])).toEqual([
        ["test_a", "passed"],
        ["test_b", "failed"],
      ]);
    expect(pytest.parse("nothing useful\n", null, p)).toBeNull();
  });

  test("unittest --failfast cannot be instrumented: a failing canary would stop the real tests", () => {
    for (const flag of ["-f", "--failfast"])
      expect(unittest.plan(pyInput(["python3", "-m", "unittest", "discover", flag], 3))).toContain(flag);
  });
});

describe("jest", () => {
  test("reads assertion results per file, with their describe blocks; a file that could not load is a failure", () => {
    const p = plan(
      jest.plan({
        argv: ["jest"],
        offset: 1,
        gateEnv: dir,
        privateDir: dir,
        reportPath: "/dev/fd/3",
        canary: false,
        renamed: new Map(),
      }),
    );
    const json = JSON.stringify({
      testResults: [
        {
          name: join(dir, "a.test.js"),
          status: "passed",
          assertionResults: [
            { ancestorTitles: ["add", "ints"], title: "adds", status: "passed" },
            { ancestorTitles: [], title: "later", status: "pending" },
          ],
        },
        { name: join(dir, "b.test.js"), status: "failed", assertionResults: [] },
      ],
    });
    const r = jest.parse("", json, p);
    expect(r?.tests).toEqual([
      { name: "adds", suites: ["add", "ints"], file: "a.test.js", outcome: "passed" },
      { name: "later", suites: [], file: "a.test.js", outcome: "skipped" },
      { name: "b.test.js", suites: [], file: "b.test.js", outcome: "failed" },
    ]);
    expect(jest.parse("", "not json", p)).toBeNull();
    expect(jest.parse("", null, p)).toBeNull();
  });
});
