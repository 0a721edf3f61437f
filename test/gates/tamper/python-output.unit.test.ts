import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { TamperPlan } from "../../../src/gates/tamper/adapter.js";
import { nodeIdOf } from "../../../src/gates/tamper/pytest-output.js";
import { pytest, unittest } from "../../../src/gates/tamper/python.js";
import type { TestReport } from "../../../src/gates/tamper/test-report.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "lg-pyout-"));
  for (const rel of ["tests/__init__.py", "tests/test_add.py", "tests/test_gone.py"]) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), "");
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const planOf = (runner: "unittest" | "pytest", args: string[]): TamperPlan => ({
  runner,
  cwd: dir,
  argv: ["python3", "-m", runner, ...args],
  env: {},
  files: [],
  canary: null,
  reportsToPath: false,
});

const ids = (r: TestReport | null) =>
  r?.tests.map((t) => [t.file, ...t.suites, t.name, t.outcome].join(" ")).sort() ?? null;

// Python 3.11's own output for a run of tests/test_add.py (a print, a docstring, subtests, a skip,
// an expected failure, an unexpected success, an error, a failing setUpClass), a module that failed to
// import and a module skipped as a whole.
const UNITTEST_RUN = (mod: string, mid: string[] = ["test_small (M.AddTest.test_small) ... ok"]) =>
  [
    "test_doc (M.AddTest.test_doc)",
    "Adds zero. ... ok",
    "test_err (M.AddTest.test_err) ... ERROR",
    "test_skip (M.AddTest.test_skip) ... skipped 'later'",
    ...mid,
    "test_sub (M.AddTest.test_sub) ... ",
    "  test_sub (M.AddTest.test_sub) (i=0) ... FAIL",
    "  test_sub (M.AddTest.test_sub) (i=2) ... FAIL",
    "test_us (M.AddTest.test_us) ... unexpected success",
    "test_xf (M.AddTest.test_xf) ... expected failure",
    "ERROR",
    "P.test_broken (unittest.loader._FailedTest.P.test_broken) ... ERROR",
    "P.test_gone (unittest.loader.ModuleSkipped.P.test_gone) ... skipped 'gone'",
    "",
    "======================================================================",
    "ERROR: test_err (M.AddTest.test_err)",
    "----------------------------------------------------------------------",
    "KeyError: 'x'",
    "",
    "======================================================================",
    "ERROR: setUpClass (M.Broken)",
    "----------------------------------------------------------------------",
    "RuntimeError: no",
    "",
    "======================================================================",
    "ERROR: P.test_broken (unittest.loader._FailedTest.P.test_broken)",
    "----------------------------------------------------------------------",
    "ImportError: Failed to import test module: P.test_broken",
    "",
    "======================================================================",
    "FAIL: test_sub (M.AddTest.test_sub) (i=0)",
    "----------------------------------------------------------------------",
    "AssertionError: 0 != 1",
    "",
    "======================================================================",
    "UNEXPECTED SUCCESS: test_us (M.AddTest.test_us)",
    "----------------------------------------------------------------------",
    "Ran 9 tests in 0.005s",
    "",
    "FAILED (failures=2, errors=3, skipped=2, expected failures=1, unexpected successes=1)",
  ]
    .join("\n")
    .replaceAll("M.", `${mod}.`)
    .replaceAll("P.", mod.includes(".") ? "tests." : "");

const UNITTEST_IDS = [
  "tests/test_add.py AddTest test_doc passed",
  "tests/test_add.py AddTest test_err failed",
  "tests/test_add.py AddTest test_skip skipped",
  "tests/test_add.py AddTest test_small passed",
  "tests/test_add.py AddTest test_sub failed",
  "tests/test_add.py AddTest test_us failed",
  "tests/test_add.py AddTest test_xf skipped",
  "tests/test_add.py Broken setUpClass failed",
  "tests/test_broken.py tests.test_broken failed",
].sort();

describe("unittest output → identities", () => {
  test("every status form, with module names relative to the top-level folder", () => {
    const r = unittest.parse(
      UNITTEST_RUN("tests.test_add"),
      null,
      planOf("unittest", ["discover", "-v", "-s", "tests", "-t", "."]),
    );
    expect(ids(r)).toEqual(UNITTEST_IDS);
    expect(r?.silentFiles).toEqual(["tests/test_gone.py"]);
  });

  test("discover without -t: module names are relative to the start folder", () => {
    const r = unittest.parse(
      UNITTEST_RUN("test_add"),
      null,
      planOf("unittest", ["discover", "-v", "-s", "tests"]),
    );
    expect(ids(r)).toEqual(
      UNITTEST_IDS.map((l) => l.replace("tests/test_broken.py tests.", "tests/test_broken.py ")),
    );
  });

  test("a test's own output between its name and its status is skipped", () => {
    const mid = ["test_small (M.AddTest.test_small) ... hello from test", "PASSED nothing", "ok"];
    const r = unittest.parse(
      UNITTEST_RUN("tests.test_add", mid),
      null,
      planOf("unittest", ["-v", "tests.test_add"]),
    );
    expect(ids(r)).toContain("tests/test_add.py AddTest test_small passed");
  });

  test("a status lost in that output passes only when the summary's skips are all accounted for", () => {
    const lost = ["test_small (M.AddTest.test_small) ... partial line without end ok"];
    const plan = planOf("unittest", ["-v", "tests.test_add"]);
    const r = unittest.parse(UNITTEST_RUN("tests.test_add", lost), null, plan);
    expect(ids(r)).toContain("tests/test_add.py AddTest test_small passed");
    const moreSkips = UNITTEST_RUN("tests.test_add", lost).replace("skipped=2", "skipped=3");
    expect(ids(unittest.parse(moreSkips, null, plan))).toContain(
      "tests/test_add.py AddTest test_small failed",
    );
  });

  test("Python 3.10's form (the class without the method) names the same test", () => {
    const out = "test_small (tests.test_add.AddTest) ... ok\n\n---\nRan 1 test in 0.001s\n\nOK\n";
    expect(ids(unittest.parse(out, null, planOf("unittest", ["-v"])))).toEqual([
      "tests/test_add.py AddTest test_small passed",
    ]);
  });

  test("without `Ran N tests` and its status line the run is unreadable", () => {
    const plan = planOf("unittest", ["-v"]);
    expect(unittest.parse("test_small (tests.test_add.AddTest.test_small) ... ok\n", null, plan)).toBeNull();
    expect(
      unittest.parse("test_small (a.B.test_small) ... ok\nRan 1 test in 0.001s\n", null, plan),
    ).toBeNull();
  });
});

// pytest 7.2's output with -rA: the PASSES section shows a test's captured print, which must not count.
const PYTEST_RUN = [
  "==================================== PASSES ====================================",
  "____________________________________ test_a ____________________________________",
  "----------------------------- Captured stdout call -----------------------------",
  "PASSED tests/test_fake.py::test_forged",
  "=========================== short test summary info ============================",
  "PASSED tests/test_py.py::test_a",
  "PASSED tests/test_py.py::test_p[1-2]",
  "PASSED tests/test_py.py::test_p[a b-c - d]]",
  "PASSED tests/test_py.py::TestK::TestInner::test_in",
  "SKIPPED [1] tests/test_py.py:18: later",
  "XFAIL tests/test_py.py::test_xf",
  "XPASS tests/test_py.py::test_xp ",
  "ERROR tests/test_py.py::test_e - RuntimeError: x",
  "FAILED tests/test_py.py::test_p[3-3] - assert 3 != 3",
  "FAILED tests/test_py.py::TestK::test_k - assert [0] == [1]",
  "==== 2 failed, 4 passed, 1 skipped, 1 xfailed, 1 xpassed, 1 error in 0.14s =====",
];

describe("pytest output → identities", () => {
  const plan = planOf("pytest", ["tests", "-rA", "-p", "no:cacheprovider"]);

  test("every summary line, parametrised ids with spaces and brackets, nested classes", () => {
    expect(ids(pytest.parse(PYTEST_RUN.join("\n"), null, plan))).toEqual(
      [
        "tests/test_py.py test_a passed",
        "tests/test_py.py test_p[1-2] passed",
        "tests/test_py.py test_p[a b-c - d]] passed",
        "tests/test_py.py TestK TestInner test_in passed",
        "tests/test_py.py tests/test_py.py:18: skipped",
        "tests/test_py.py test_xf skipped",
        "tests/test_py.py test_xp failed",
        "tests/test_py.py test_e failed",
        "tests/test_py.py test_p[3-3] failed",
        "tests/test_py.py TestK test_k failed",
      ].sort(),
    );
  });

  test("a summary listing fewer tests than the count line was cut, and is unreadable", () => {
    const cut = PYTEST_RUN.filter((l) => !l.startsWith("PASSED tests/test_py.py::test_a"));
    expect(pytest.parse(cut.join("\n"), null, plan)).toBeNull();
    expect(pytest.parse("collecting ...\n", null, plan)).toBeNull();
  });

  test("-q's bare count line, and a collection error naming only its file", () => {
    const out = [
      "=========================== short test summary info ============================",
      "ERROR tests/test_broken.py",
      "!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!",
      "1 error in 0.16s",
    ].join("\n");
    expect(ids(pytest.parse(out, null, plan))).toEqual(["tests/test_broken.py tests/test_broken.py failed"]);
  });

  test.each([
    ["tests/a.py::t - msg", "FAILED", "tests/a.py::t"],
    ["tests/a.py::t[x - y] - assert [1] - [2]", "FAILED", "tests/a.py::t[x - y]"],
    ["tests/a.py::t[a]]", "PASSED", "tests/a.py::t[a]]"],
    ["tests/a.py::t[a b] reason here", "XPASS", "tests/a.py::t[a b]"],
  ])("node id of %j (%s) is %j", (rest, kind, id) => {
    expect(nodeIdOf(rest, kind)).toBe(id);
  });
});
