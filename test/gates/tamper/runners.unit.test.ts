import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { TamperPlan } from "../../../src/gates/tamper/adapter.js";
import { jest } from "../../../src/gates/tamper/js-frameworks.js";
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

describe("unittest", () => {
  test("a name filter cannot be instrumented: the canary could be left out", () => {
    const p = unittest.plan({
      argv: ["python3", "-m", "unittest", "-k", "fast"],
      offset: 3,
      gateEnv: dir,
      reportDir: dir,
    });
    expect(p).toContain("-k");
  });

  test("discovery gets a canary module named by its pattern, and -v", () => {
    const p = plan(
      unittest.plan({
        argv: ["python3", "-m", "unittest", "discover", "-s", "tests", "-p", "*_test.py"],
        offset: 3,
        gateEnv: dir,
        reportDir: dir,
      }),
    );
    expect(p.argv.slice(0, 5)).toEqual(["python3", "-m", "unittest", "discover", "-v"]);
    expect(p.files[0]?.path).toMatch(new RegExp(`^${dir}/tests/\\w+_test\\.py$`));
    expect(p.canary.tests.length).toBeGreaterThan(5);
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
    const p = plan(
      unittest.plan({ argv: ["python3", "-m", "unittest"], offset: 3, gateEnv: dir, reportDir: dir }),
    );
    const r = unittest.parse(out(p.canary.tests), null, p);
    expect(r?.tests.filter((t) => t.outcome === "passed").map((t) => t.name)).toEqual([
      "test_small",
      "test_zero",
    ]);
    expect(
      r?.tests
        .filter((t) => t.outcome === "failed")
        .map((t) => t.name)
        .sort(),
    ).toEqual([...p.canary.tests].sort());
    expect(r?.silentFiles).toEqual(["tests/test_gone.py"]);
  });

  test("no summary (the process ended before printing it) is unreadable", () => {
    const p = plan(
      unittest.plan({ argv: ["python3", "-m", "unittest"], offset: 3, gateEnv: dir, reportDir: dir }),
    );
    expect(unittest.parse("test_small (a.B.test_small) ... ok\n", null, p)).toBeNull();
  });
});

describe("pytest", () => {
  test("-x stops at the first failure and cannot be instrumented", () => {
    expect(pytest.plan({ argv: ["pytest", "-x"], offset: 1, gateEnv: dir, reportDir: dir })).toContain("-x");
  });

  test("reads the -rA short summary, and refuses one that lists fewer tests than the count line", () => {
    const p = plan(pytest.plan({ argv: ["pytest"], offset: 1, gateEnv: dir, reportDir: dir }));
    const lines = [
      "PASSED tests/test_a.py::test_one",
      "PASSED tests/test_a.py::TestB::test_two",
      "SKIPPED [1] tests/test_a.py:9: later",
      "FAILED tests/test_z.py::test_c - AssertionError",
      "========= 1 failed, 2 passed, 1 skipped in 0.03s =========",
    ];
    const r = pytest.parse(lines.join("\n"), null, p);
    expect(r?.tests.map((t) => [t.name, t.outcome])).toEqual([
      ["test_one", "passed"],
      ["test_two", "passed"],
      ["tests/test_a.py:9:", "skipped"],
      ["test_c", "failed"],
    ]);
    expect(pytest.parse(lines.slice(1).join("\n"), null, p)).toBeNull();
  });
});

describe("quiet pytest and failfast unittest", () => {
  test("pytest -q prints a bare count line and -qq none: the short summary is read either way", () => {
    const p = plan(pytest.plan({ argv: ["pytest", "-q"], offset: 1, gateEnv: dir, reportDir: dir }));
    const summary = ["PASSED tests/test_x.py::test_a", "FAILED tests/test_x.py::test_b - assert 0"];
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
      expect(
        unittest.plan({
          argv: ["python3", "-m", "unittest", "discover", flag],
          offset: 3,
          gateEnv: dir,
          reportDir: dir,
        }),
      ).toContain(flag);
  });
});

describe("jest", () => {
  test("reads assertion results per file from the JSON report; a file that could not load is a failure", () => {
    const p = plan(jest.plan({ argv: ["jest"], offset: 1, gateEnv: dir, reportDir: dir }));
    const json = JSON.stringify({
      testResults: [
        {
          name: join(dir, "a.test.js"),
          status: "passed",
          assertionResults: [
            { title: "adds", status: "passed" },
            { title: "later", status: "pending" },
          ],
        },
        { name: join(dir, "b.test.js"), status: "failed", assertionResults: [] },
      ],
    });
    const r = jest.parse("", json, p);
    expect(r?.tests).toEqual([
      { name: "adds", file: "a.test.js", outcome: "passed" },
      { name: "later", file: "a.test.js", outcome: "skipped" },
      { name: "b.test.js", file: "b.test.js", outcome: "failed" },
    ]);
    expect(jest.parse("", "not json", p)).toBeNull();
    expect(jest.parse("", null, p)).toBeNull();
  });
});
