import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import type { RunnerAdapter, TamperPlan } from "../../../src/gates/tamper/adapter.js";
import { pytest, unittest } from "../../../src/gates/tamper/python.js";
import type { TestReport } from "../../../src/gates/tamper/test-report.js";
import { pythonTwins } from "../../../src/gates/tamper/twins/python-twins.js";

const PYTHON = "/usr/bin/python3";
const root = mkdtempSync(join(tmpdir(), "lg-pyargv-int-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const unittestCase = `import unittest

from calc import add


class BasicTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 2), 4)

    def test_neg(self):
        """Adds negatives."""
        self.assertEqual(add(-1, -2), -3)


class TestPlain:
    def test_zero(self):
        assert add(0, 5) == 5
`;

const pytestOnly = `import pytest

from calc import add


@pytest.mark.parametrize("a,b,want", [(1, 2, 3), (2, 2, 4)])
def test_sum(a, b, want):
    assert add(a, b) == want


@pytest.mark.slow
def test_one():
    assert add(1, 0) == 1
`;

const project = (calc: string): Record<string, string> => ({
  "calc/__init__.py": calc,
  "tests/__init__.py": "",
  "tests/test_basic.py": unittestCase,
  "tests/test_param.py": pytestOnly,
  "pytest.ini": "[pytest]\nmarkers =\n    slow: a slow test\n",
});
const HONEST = project("def add(a, b):\n    return a + b\n");
// Wrong code that ends the test process with exit 0 as soon as a test module imports it.
const EXIT_ON_IMPORT = project("import os\nos._exit(0)\n\ndef add(a, b):\n    return a - b\n");

let runs = 0;
function tree(files: Record<string, string>): string {
  const dir = join(root, `p${runs++}`);
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  return dir;
}

/** Runs the planned argv for real, its output combined as the gate reads it. */
function run(p: TamperPlan): Promise<{ output: string; code: number | null }> {
  const [program, ...args] = p.argv;
  const exe = program === "python3" ? PYTHON : `/usr/bin/${program}`;
  return new Promise((done) => {
    const child = spawn(exe, args, {
      cwd: p.cwd,
      env: { PATH: "/usr/bin:/bin", HOME: p.cwd, PYTHONDONTWRITEBYTECODE: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (c) => (output += c));
    child.stderr.on("data", (c) => (output += c));
    child.on("close", (code) => done({ output, code }));
  });
}

async function gateRun(
  adapter: RunnerAdapter,
  argv: string[],
  files: Record<string, string>,
  canary: boolean,
) {
  const dir = tree(files);
  const offset = argv[0] === "python3" ? 3 : 1;
  const p = adapter.plan({
    argv,
    offset,
    gateEnv: dir,
    privateDir: join(root, "private"),
    reportPath: "/dev/fd/3",
    canary,
    renamed: new Map(),
  });
  if (typeof p === "string") throw new Error(p);
  for (const f of p.files) writeFileSync(f.path, f.content, { flag: "wx" });
  const r = await run(p);
  return { plan: p, report: adapter.parse(r.output, null, p), ...r };
}

const identity = (t: TestReport["tests"][number]) => [t.file, ...t.suites, t.name].join("::");

/** The real tests the report says passed (loopgate's canary left out), by identity. */
function passed(r: TestReport | null, p: TamperPlan): string[] {
  const canary = new Set(p.canary?.tests ?? []);
  return (r?.tests ?? [])
    .filter((t) => t.outcome === "passed" && !canary.has(t.name))
    .map(identity)
    .sort();
}

const BASIC = ["tests/test_basic.py::BasicTest::test_add", "tests/test_basic.py::BasicTest::test_neg"];
const PLAIN = "tests/test_basic.py::TestPlain::test_zero";
const SUMS = ["tests/test_param.py::test_sum[1-2-3]", "tests/test_param.py::test_sum[2-2-4]"];
const ONE = "tests/test_param.py::test_one";

const UNITTEST_FORMS: [string[], string[]][] = [
  [["discover", "-s", "tests", "-t", "."], BASIC],
  [["discover", "-s", "tests"], BASIC],
  [["discover", "tests", "-q"], BASIC],
  [["-q"], BASIC],
  [["tests.test_basic", "-v"], BASIC],
  [["tests.test_basic.BasicTest", "-q"], BASIC],
  [["tests.test_basic.BasicTest.test_add", "--locals"], [BASIC[0] ?? ""]],
  [["tests/test_basic.py", "-b"], BASIC],
  [["-k", "add", "tests.test_basic"], [BASIC[0] ?? ""]],
];

const PYTEST_FORMS: [string[], string[]][] = [
  [
    ["python3", "-m", "pytest", "tests"],
    [...BASIC, PLAIN, ...SUMS, ONE],
  ],
  [
    ["python3", "-m", "pytest"],
    [...BASIC, PLAIN, ...SUMS, ONE],
  ],
  [
    ["pytest", "-q", "tests/test_basic.py"],
    [...BASIC, PLAIN],
  ],
  [["python3", "-m", "pytest", "tests/test_param.py::test_sum", "-q"], SUMS],
  [["python3", "-m", "pytest", "tests/test_param.py::test_sum[2-2-4]"], [SUMS[1] ?? ""]],
  [["python3", "-m", "pytest", "tests/test_basic.py::BasicTest::test_add", "-v"], [BASIC[0] ?? ""]],
  [
    ["python3", "-m", "pytest", "-k", "sum or zero", "tests"],
    [PLAIN, ...SUMS],
  ],
];

const allPassed = (r: TestReport | null, p: TamperPlan, want: string[]) => {
  const got = new Set(passed(r, p));
  return r !== null && want.every((w) => got.has(w));
};

for (const canary of [false, true]) {
  describe(`unittest forms, canary ${canary ? "planted" : "absent"}`, () => {
    test.each(UNITTEST_FORMS)("%j", async (args, want) => {
      const honest = await gateRun(unittest, ["python3", "-m", "unittest", ...args], HONEST, canary);
      expect(passed(honest.report, honest.plan), honest.output).toEqual([...want].sort());
      const canaryTests =
        honest.report?.tests.filter((t) => honest.plan.canary?.tests.includes(t.name)) ?? [];
      expect(canaryTests.length).toBe(canary ? 10 : 0);
      expect(canaryTests.every((t) => t.outcome === "failed")).toBe(true);
      for (const f of honest.plan.files) expect(existsSync(f.path)).toBe(true);

      const forged = await gateRun(unittest, ["python3", "-m", "unittest", ...args], EXIT_ON_IMPORT, canary);
      expect(forged.code).toBe(0);
      expect(allPassed(forged.report, forged.plan, want)).toBe(false);
    });
  });

  describe(`pytest forms, canary ${canary ? "planted" : "absent"}`, () => {
    test.each(PYTEST_FORMS)("%j", async (argv, want) => {
      const honest = await gateRun(pytest, argv, HONEST, canary);
      expect(passed(honest.report, honest.plan), honest.output).toEqual([...want].sort());
      const canaryTests =
        honest.report?.tests.filter((t) => honest.plan.canary?.tests.includes(t.name)) ?? [];
      expect(canaryTests.length).toBe(canary ? 15 : 0);
      expect(canaryTests.every((t) => t.outcome === "failed")).toBe(true);

      const forged = await gateRun(pytest, argv, EXIT_ON_IMPORT, canary);
      expect(forged.code).toBe(0);
      expect(allPassed(forged.report, forged.plan, want)).toBe(false);
    });
  });
}

describe("pytest -m", () => {
  test("selects by marker when no canary is needed, and says why it cannot keep one", async () => {
    const r = await gateRun(pytest, ["python3", "-m", "pytest", "-m", "slow", "tests"], HONEST, false);
    expect(passed(r.report, r.plan)).toEqual([ONE]);
    const refused = pytest.plan({
      argv: ["python3", "-m", "pytest", "-m", "slow"],
      offset: 3,
      gateEnv: root,
      privateDir: root,
      reportPath: "/dev/fd/3",
      canary: true,
      renamed: new Map(),
    });
    expect(refused).toMatch(/-m selects tests by marker/);
  });
});

describe("a name that selects a renamed test selects its emitted names (twins rendered for real)", () => {
  const file = "tests/test_basic.py";
  const renamedTo = [`${file}::BasicTest::test_add_edge_41`, `${file}::BasicTest::test_add_parse_12`];

  async function withTwin(argv: string[], adapter: RunnerAdapter) {
    const rendered = (
      await pythonTwins.render([
        {
          path: file,
          source: unittestCase,
          tests: [
            {
              path: ["BasicTest", "test_add"],
              name: "test_add_edge_41",
              twins: [{ site: "0.0", replacement: "5", name: "test_add_parse_12", before: false }],
            },
          ],
        },
      ])
    ).get(file);
    if (!rendered?.ok) throw new Error(rendered ? rendered.why : "no rendering");
    const dir = tree({ ...HONEST, [file]: rendered.content });
    const p = adapter.plan({
      argv,
      offset: 3,
      gateEnv: dir,
      privateDir: join(root, "private"),
      reportPath: "/dev/fd/3",
      canary: false,
      renamed: new Map([[`${file}::BasicTest::test_add`, renamedTo]]),
    });
    if (typeof p === "string") throw new Error(p);
    const r = await run(p);
    return (adapter.parse(r.output, null, p)?.tests ?? []).map((t) => `${identity(t)} ${t.outcome}`).sort();
  }

  test.each([
    [unittest, ["python3", "-m", "unittest", "tests.test_basic.BasicTest.test_add", "-q"]],
    [pytest, ["python3", "-m", "pytest", "tests/test_basic.py::BasicTest::test_add", "-q"]],
  ])("%#: the renamed original passes and its twin fails", async (adapter, argv) => {
    expect(await withTwin(argv, adapter)).toEqual([`${renamedTo[0]} passed`, `${renamedTo[1]} failed`]);
  });
});
