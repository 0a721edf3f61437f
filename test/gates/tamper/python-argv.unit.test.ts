import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { PlanInput, RunnerAdapter, TamperPlan } from "../../../src/gates/tamper/adapter.js";
import { pytest, unittest } from "../../../src/gates/tamper/python.js";

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "lg-pyargv-"));
  const files: Record<string, string> = {
    "calc/__init__.py": "",
    "tests/__init__.py": "",
    "tests/test_basic.py": "",
    "tests/test_more.py": "",
    "ini/pytest.ini": "[pytest]\ntestpaths =\n    suite\n",
    "ini/suite/test_s.py": "",
  };
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const RENAMED = new Map<string, string[]>([
  [
    "tests/test_basic.py::BasicTest::test_add",
    ["tests/test_basic.py::BasicTest::test_add_edge_1", "tests/test_basic.py::BasicTest::test_add_parse_2"],
  ],
  ["tests/test_p.py::test_p", ["tests/test_p.py::test_p_mixed_3", "tests/test_p.py::test_p_order_4"]],
]);

function plan(adapter: RunnerAdapter, args: string[], over: Partial<PlanInput> = {}): TamperPlan | string {
  return adapter.plan({
    argv: ["python3", "-m", adapter.id, ...args],
    offset: 3,
    gateEnv: dir,
    privateDir: join(dir, "private"),
    reportPath: "/dev/fd/3",
    canary: false,
    renamed: new Map(),
    ...over,
  });
}

function planned(p: TamperPlan | string): TamperPlan {
  if (typeof p === "string") throw new Error(p);
  return p;
}

const words = (p: TamperPlan | string) => planned(p).argv.slice(3);

describe("unittest argv: options first, then -v, then the names", () => {
  test.each([
    [[], ["-v"]],
    [["-q"], ["-q", "-v"]],
    [
      ["tests.test_basic", "-v"],
      ["-v", "-v", "tests.test_basic"],
    ],
    [
      ["-b", "tests.test_basic.BasicTest", "-c", "--locals"],
      ["-b", "-c", "--locals", "-v", "tests.test_basic.BasicTest"],
    ],
    [
      ["tests/test_basic.py", "-q"],
      ["-q", "-v", "tests/test_basic.py"],
    ],
    [
      ["tests.test_basic.BasicTest.test_add", "tests.test_more"],
      ["-v", "tests.test_basic.BasicTest.test_add", "tests.test_more"],
    ],
    [
      ["--verb", "-k", "add", "tests.test_basic"],
      ["-v", "-k", "add", "-v", "tests.test_basic"],
    ],
    [
      ["-kadd", "tests"],
      ["-k", "add", "-v", "tests"],
    ],
    [["discover"], ["discover", "-v"]],
    [
      ["discover", "-s", "tests", "-t", "."],
      ["discover", "-v", "-s", "tests", "-t", "."],
    ],
    [
      ["discover", "--start-directory=tests", "--pattern", "test_*.py", "-q"],
      ["discover", "-q", "-v", "-s", "tests", "-p", "test_*.py"],
    ],
    [
      ["discover", "tests", "test_*.py", "."],
      ["discover", "-v", "-s", "tests", "-p", "test_*.py", "-t", "."],
    ],
    [
      ["discover", "-vs", "tests"],
      ["discover", "-v", "-v", "-s", "tests"],
    ],
    [
      ["discover", "--top=.", "--start", "tests", "-q"],
      ["discover", "-q", "-v", "-s", "tests", "-t", "."],
    ],
  ])("%j → %j", (args, expected) => {
    const p = planned(plan(unittest, args));
    expect(p.argv.slice(0, 3)).toEqual(["python3", "-m", "unittest"]);
    expect(p.argv.slice(3)).toEqual(expected);
    expect(p.files).toEqual([]);
    expect(p.canary).toBeNull();
    expect(p.reportsToPath).toBe(false);
  });

  test.each([[["-f"]], [["--failfast"]], [["--fail", "tests"]], [["discover", "-fv"]]])(
    "%j stops at the first failure and is refused",
    (args) => {
      expect(plan(unittest, args)).toMatch(/stops at the first failure/);
    },
  );

  test("more than three discover positionals cannot be read", () => {
    expect(plan(unittest, ["discover", "a", "b", "c", "d"])).toMatch(/at most three/);
  });
});

describe("unittest canary: importable, and run after every option", () => {
  test.each([
    ["a module", ["tests.test_basic", "-v"]],
    ["a class (not taken for a module)", ["tests.test_basic.BasicTest"]],
    ["a method", ["tests.test_basic.BasicTest.test_add", "-q"]],
    ["a path", ["tests/test_basic.py"]],
  ])("beside %s, named last", (_what, args) => {
    const p = planned(plan(unittest, args, { canary: true }));
    const name = p.argv[p.argv.length - 1] ?? "";
    expect(name).toMatch(/^tests\.test_\w+$/);
    expect(p.argv.indexOf("-v")).toBeLessThan(p.argv.indexOf(args.find((a) => !a.startsWith("-")) ?? ""));
    expect(p.files.map((f) => f.path)).toEqual([join(dir, "tests", `${name.slice("tests.".length)}.py`)]);
    expect(p.canary?.tests.length).toBe(10);
    expect(p.files[0]?.content).toContain("(unittest.TestCase)");
  });

  test("under discovery the canary file matches the pattern and is not named", () => {
    const p = planned(plan(unittest, ["discover", "-s", "tests", "-p", "*_check.py"], { canary: true }));
    expect(dirname(p.files[0]?.path ?? "")).toBe(join(dir, "tests"));
    expect(basename(p.files[0]?.path ?? "")).toMatch(/^[a-z]\w*_check\.py$/);
    expect(p.argv.slice(3)).toEqual(["discover", "-v", "-s", "tests", "-p", "*_check.py"]);
  });

  test("a -k selection gets a pattern that keeps the canary's module", () => {
    const p = planned(plan(unittest, ["-k", "add", "tests.test_basic"], { canary: true }));
    const mod = basename(p.files[0]?.path ?? "", ".py");
    expect(p.argv.slice(3)).toEqual(["-k", "add", "-k", mod, "-v", "tests.test_basic", `tests.${mod}`]);
  });

  test("a pattern loopgate cannot name a file for is refused", () => {
    expect(plan(unittest, ["discover", "-p", "check?.py"], { canary: true })).toMatch(/pattern/);
  });
});

describe("unittest renamed tests", () => {
  test.each([
    [
      ["tests.test_basic.BasicTest.test_add", "-q"],
      [
        "-q",
        "-v",
        "tests.test_basic.BasicTest.test_add_edge_1",
        "tests.test_basic.BasicTest.test_add_parse_2",
      ],
    ],
    [["tests.test_basic.BasicTest.test_sub"], ["-v", "tests.test_basic.BasicTest.test_sub"]],
    [
      ["-k", "*BasicTest.test_add", "tests"],
      ["-k", "*BasicTest.test_add", "-k", "*BasicTest.test_add_*", "-v", "tests"],
    ],
  ])("%j → %j", (args, expected) => {
    expect(words(plan(unittest, args, { renamed: RENAMED }))).toEqual(expected);
  });
});

const TAIL = ["-rA", "-p", "no:cacheprovider"];

describe("pytest argv: -rA and no cache provider added, selections kept", () => {
  test.each([
    [[]],
    [["tests"]],
    [["-q", "tests/test_basic.py::test_a"]],
    [["-k", "add and not sub", "-v"]],
    [["-m", "slow"]],
    [["tests/test_x.py::TestC::test_y[1-2]", "-rx"]],
    [["--tb", "short", "-p", "xdist", "-n", "2"]],
  ])("%j", (args) => {
    const p = planned(plan(pytest, args));
    expect(p.argv.slice(3)).toEqual([...args, ...TAIL]);
    expect(p.canary).toBeNull();
    expect(p.files).toEqual([]);
    expect(p.reportsToPath).toBe(false);
  });

  test.each([
    [["-x"], "-x"],
    [["-vx", "tests"], "-x"],
    [["--exitfirst"], "--exitfirst"],
    [["--maxfail=2"], "--maxfail"],
    [["--maxfail", "2"], "--maxfail"],
    [["--sw"], "--sw"],
    [["--lf"], "--lf"],
    [["--no-summary"], "--no-summary"],
  ])("%j is refused", (args, word) => {
    const p = plan(pytest, args);
    expect(typeof p).toBe("string");
    expect(p).toContain(word);
  });
});

describe("pytest canary", () => {
  const canaryOf = (p: TamperPlan) => p.files[0]?.path ?? "";

  test("in the folder given first, where it is collected, or beside a file and named after it", () => {
    const inDir = planned(plan(pytest, ["tests"], { canary: true }));
    expect(dirname(canaryOf(inDir))).toBe(join(dir, "tests"));
    expect(inDir.argv.slice(3)).toEqual(["tests", ...TAIL]);
    expect(inDir.canary?.tests.length).toBe(15);
    const args = ["tests/test_basic.py::test_a", "-q"];
    const beside = planned(plan(pytest, args, { canary: true }));
    expect(dirname(canaryOf(beside))).toBe(join(dir, "tests"));
    expect(beside.argv.slice(3)).toEqual([...args, ...TAIL, `tests/${basename(canaryOf(beside))}`]);
  });

  test("a -k selection is widened to the canary's module, in place of the user's -k", () => {
    const p = planned(plan(pytest, ["-vkadd", "tests", "-k", "sub"], { canary: true }));
    const mod = basename(canaryOf(p), ".py");
    expect(p.argv.slice(3)).toEqual(["-v", "tests", ...TAIL, "-k", `(sub) or ${mod}`]);
  });

  test("-m cannot keep the canary, and says so", () => {
    expect(plan(pytest, ["-m", "slow"], { canary: true })).toMatch(/-m selects tests by marker/);
  });

  test("a bare pytest keeps collecting its testpaths: the canary goes into the first, unnamed", () => {
    const p = planned(plan(pytest, [], { canary: true, gateEnv: join(dir, "ini") }));
    expect(dirname(canaryOf(p))).toBe(join(dir, "ini", "suite"));
    expect(p.argv.slice(3)).toEqual(TAIL);
    const bare = planned(plan(pytest, [], { canary: true }));
    expect(dirname(canaryOf(bare))).toBe(dir);
  });
});

describe("pytest renamed tests", () => {
  test.each([
    [
      ["tests/test_basic.py::BasicTest::test_add"],
      ["tests/test_basic.py::BasicTest::test_add_edge_1", "tests/test_basic.py::BasicTest::test_add_parse_2"],
    ],
    [
      ["./tests/test_basic.py::BasicTest::test_add", "-q"],
      [
        "./tests/test_basic.py::BasicTest::test_add_edge_1",
        "./tests/test_basic.py::BasicTest::test_add_parse_2",
        "-q",
      ],
    ],
    [
      ["tests/test_p.py::test_p[1-2]"],
      ["tests/test_p.py::test_p_mixed_3", "tests/test_p.py::test_p_order_4"],
    ],
    [
      ["--deselect", "tests/test_basic.py::BasicTest::test_add"],
      [
        "--deselect",
        "tests/test_basic.py::BasicTest::test_add_edge_1",
        "--deselect",
        "tests/test_basic.py::BasicTest::test_add_parse_2",
      ],
    ],
    [
      ["--deselect=tests/test_basic.py::BasicTest::test_add"],
      [
        "--deselect=tests/test_basic.py::BasicTest::test_add_edge_1",
        "--deselect=tests/test_basic.py::BasicTest::test_add_parse_2",
      ],
    ],
    [["tests/test_basic.py::BasicTest::test_sub"], ["tests/test_basic.py::BasicTest::test_sub"]],
  ])("%j → %j", (args, expected) => {
    expect(words(plan(pytest, args, { renamed: RENAMED }))).toEqual([...expected, ...TAIL]);
  });
});
