import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, test } from "vitest";
import { pythonTwins } from "../../../../src/gates/tamper/twins/python-twins.js";
import type { DefinedTest, FileAnalysis, RenderRequest } from "../../../../src/gates/tamper/twins/twin.js";

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "../../../..");
const example = join(repoRoot, "examples/py-durations");
const scratch = mkdtempSync(join(tmpdir(), "lg-pytwins-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function analyse(path: string, source: string): Promise<FileAnalysis> {
  const out = (await pythonTwins.analyse([{ path, source }])).get(path);
  if (!out) throw new Error(`no analysis for ${path}`);
  return out;
}

async function tests(path: string, source: string): Promise<DefinedTest[]> {
  const a = await analyse(path, source);
  if (!a.ok) throw new Error(a.why);
  return a.tests;
}

async function render(req: RenderRequest): Promise<string> {
  const r = (await pythonTwins.render([req])).get(req.path);
  if (!r?.ok) throw new Error(r ? r.why : "no rendering");
  return r.content;
}

// Sites counted by hand: `<assertion>.<literal>` (every assert and assertEqual-style call counts, in
// source order; one inside a subTest block counts but has no site), `p<case>.<literal>` for the last
// element of each parametrize case.
const HAND = `import unittest
import pytest
from datetime import timedelta

from calc import add, parse


def helper():
    return 1


def test_plain():
    assert add(1, 2) == 3
    assert add(-1, -2) == -3
    assert parse("a") == {"k": "va", "n": 2.5}


@pytest.mark.parametrize("a,b,want", [(1, 2, 3), pytest.param(2, 2, 4, id="two"), (0, 0, 0)])
def test_param(a, b, want):
    assert add(a, b) == want


@pytest.mark.parametrize("x", [1, 2])
def test_single(x):
    assert x > 0


class TestGroup:
    def test_flag(self):
        assert parse("t") is True
        assert parse("y") == True

    class TestInner:
        def test_text(self):
            assert parse("s") == "hello"

    def not_a_test(self):
        assert 1 == 2


class Case(unittest.TestCase):
    def test_equal(self):
        self.assertEqual(add(2, 2), 4)
        self.assertEqual(timedelta(0), timedelta(minutes=90))
        self.assertAlmostEqual(add(0.1, 0.2), 0.3, places=5)
        self.assertListEqual(parse("l"), [1, "b", False])

    def test_computed(self):
        want = add(1, 1)
        self.assertEqual(add(1, 1), want)

    def test_raises(self):
        with self.assertRaises(ValueError):
            parse("bad")

    def test_cases(self):
        for n in range(3):
            with self.subTest(n=n):
                self.assertEqual(add(n, 0), 7)
        self.assertEqual(add(1, 1), 2)


class Helper:
    def test_hidden(self):
        pass


class Base(unittest.TestCase):
    def test_shared(self):
        self.assertEqual(add(1, 1), 2)


class Derived(Base):
    def test_own(self):
        self.assertEqual(add(3, 3), 6)


def test_dup():
    assert add(1, 1) == 2


def test_dup():
    assert add(2, 1) == 3
`;

const HAND_SITES: [string[], [string, string][]][] = [
  [
    ["test_plain"],
    [
      ["0.0", "3"],
      ["1.0", "-3"],
      ["2.0", "'va'"],
      ["2.1", "2.5"],
    ],
  ],
  [
    ["test_param"],
    [
      ["p0.0", "3"],
      ["p1.0", "4"],
      ["p2.0", "0"],
    ],
  ],
  [["test_single"], []],
  [["TestGroup", "test_flag"], [["1.0", "True"]]],
  [["TestGroup", "TestInner", "test_text"], [["0.0", "'hello'"]]],
  [
    ["Case", "test_equal"],
    [
      ["0.0", "4"],
      ["1.0", "90"],
      ["2.0", "0.3"],
      ["3.0", "1"],
      ["3.1", "'b'"],
      ["3.2", "False"],
    ],
  ],
  [["Case", "test_computed"], []],
  [["Case", "test_raises"], []],
  [["Case", "test_cases"], [["1.0", "2"]]],
  [["Base", "test_shared"], []],
  [["Derived", "test_own"], [["0.0", "6"]]],
  [["test_dup"], []],
];

describe("python twins: analysis", () => {
  test("finds each test and each literal expected value of a hand-counted file", async () => {
    const found = await tests("tests/test_hand.py", HAND);
    expect(found.map((t) => [t.path, t.sites.map((s) => [s.key, s.original])])).toEqual(HAND_SITES);
    for (const t of found) {
      if (t.sites.length === 0) expect(t.note, t.path.join("::")).toBeTruthy();
      for (const s of t.sites) expect(s.replacements.length).toBeGreaterThan(0);
    }
  });

  test("a file that does not parse is not analysed, and the reason names the line", async () => {
    const a = await analyse("tests/test_bad.py", "import unittest\n\n\ndef test_x(:\n    pass\n");
    expect(a.ok).toBe(false);
    if (!a.ok) expect(a.why).toContain("line 4");
  });

  test("which files it reads, and how it renames", () => {
    for (const p of ["tests/test_x.py", "test.py", "a/b/x_test.py", "tests.py"])
      expect(pythonTwins.handles(p), p).toBe(true);
    for (const p of ["tests/x.py", "tests/test_x.js", "conftest.py", "a/testing/x.py"])
      expect(pythonTwins.handles(p), p).toBe(false);
    expect(pythonTwins.rename("test_weeks", ["edge", "41"])).toBe("test_weeks_edge_41");
  });
});

/** Integers, floats, strings and bools as expected values: one assertion each, in this order. */
const INTS = [0, 1, 2, 3, 4, 9, 10, 99, 100, -1, -2, -3, -4, -10, 123456789012];
const FLOATS = ["0.0", "0.1", "1.5", "2.25", "100.0", "-0.5", "3.14159"];
const STRINGS = ["a", "ab", "aa", "abc", "zzz", "A", "9", "x1", "hello world", "Q7q7"];
const NO_SITE_STRINGS = ["", "!!", "é"];

function propertySource(): string {
  const lines = [
    ...INTS.map((n) => `assert f() == ${n}`),
    ...FLOATS.map((x) => `assert f() == ${x}`),
    ...STRINGS.map((s) => `assert f() == '${s}'`),
    ...NO_SITE_STRINGS.map((s) => `assert f() == '${s}'`),
    "assert f() == True",
    "assert f() == False",
  ];
  return `def test_values():\n${lines.map((l) => `    ${l}`).join("\n")}\n`;
}

const classOf = (c: string) =>
  /[a-z]/.test(c) ? "a-z" : /[A-Z]/.test(c) ? "A-Z" : /[0-9]/.test(c) ? "0-9" : c;

describe("python twins: replacements", () => {
  test("are never the original, and keep its shape (20 analyses of every kind)", async () => {
    const source = propertySource();
    const files = Array.from({ length: 20 }, (_, i) => ({ path: `t${i}/test_values.py`, source }));
    const out = await pythonTwins.analyse(files);
    for (const f of files) {
      const a = out.get(f.path);
      if (!a?.ok) throw new Error(a ? a.why : "missing");
      const sites = new Map((a.tests[0]?.sites ?? []).map((s) => [s.key, s]));
      let at = 0;
      for (const n of INTS) {
        const s = sites.get(`${at++}.0`);
        const window = [n, ...(s?.replacements ?? []).map(Number)].sort((x, y) => x - y);
        expect(window.length).toBe(4);
        expect((window[3] ?? 0) - (window[0] ?? 0), `${n}: ${window}`).toBe(3);
        expect(new Set(window).size).toBe(4);
        expect(
          window.every((v) => (n < 0 ? v < 0 : v >= 0)),
          `${n}: ${window}`,
        ).toBe(true);
      }
      for (const x of FLOATS) {
        const s = sites.get(`${at++}.0`);
        expect(s?.replacements.length, x).toBeGreaterThan(0);
        for (const r of s?.replacements ?? []) {
          expect(Number(r), `${x} → ${r}`).not.toBe(Number(x));
          expect(Math.sign(Number(r)) || 1, `${x} → ${r}`).toBe(Number(x) < 0 ? -1 : 1);
        }
      }
      for (const str of STRINGS) {
        const s = sites.get(`${at++}.0`);
        const reps = (s?.replacements ?? []).map((r) => r.slice(1, -1));
        expect(reps.length, str).toBeGreaterThan(0);
        expect(new Set(reps).size).toBe(reps.length);
        for (const r of reps) {
          expect(r, str).not.toBe(str);
          if (new Set(str).size >= 2) expect([...r].sort().join("")).toBe([...str].sort().join(""));
          else {
            const diff = [...r].map((c, i) => [c, str[i] ?? ""]).filter(([c, o]) => c !== o);
            expect(diff.length, `${str} → ${r}`).toBe(1);
            const [now = "", was = ""] = diff[0] ?? [];
            expect(classOf(now)).toBe(classOf(was));
          }
        }
      }
      for (const str of NO_SITE_STRINGS) expect(sites.has(`${at++}.0`), `'${str}'`).toBe(false);
      expect(sites.get(`${at++}.0`)?.replacements).toEqual(["False"]);
      expect(sites.get(`${at++}.0`)?.replacements).toEqual(["True"]);
    }
  });
});

describe("python twins: rendering", () => {
  test("renames one test, inserts its twins beside it, and leaves every other test as it was", async () => {
    const content = await render({
      path: "tests/test_hand.py",
      source: HAND,
      tests: [
        {
          path: ["Case", "test_equal"],
          name: "test_equal_edge_41",
          twins: [
            { site: "1.0", replacement: "91", name: "test_equal_input_7", before: true },
            { site: "3.1", replacement: "'c'", name: "test_equal_order_3", before: false },
          ],
        },
      ],
    });
    const after = await tests("tests/test_hand.py", content);
    const expected = HAND_SITES.flatMap(([path, sites]): [string[], [string, string][]][] => {
      if (path.join("::") !== "Case::test_equal") return [[path, sites]];
      return [
        [["Case", "test_equal_input_7"], sites.map(([k, o]) => [k, k === "1.0" ? "91" : o])],
        [["Case", "test_equal_edge_41"], sites],
        [["Case", "test_equal_order_3"], sites.map(([k, o]) => [k, k === "3.1" ? "'c'" : o])],
      ];
    });
    expect(after.map((t) => [t.path, t.sites.map((s) => [s.key, s.original])])).toEqual(expected);
  });

  test("refuses a replacement that is not a literal of the original's kind, and a taken name", async () => {
    const base = { path: ["Derived", "test_own"], name: "test_own_edge_1" };
    const answers = await pythonTwins.render([
      {
        path: "a/test_a.py",
        source: HAND,
        tests: [
          { ...base, twins: [{ site: "0.0", replacement: "__import__('os')", name: "t_x", before: true }] },
        ],
      },
      {
        path: "b/test_b.py",
        source: HAND,
        tests: [{ ...base, twins: [{ site: "0.0", replacement: "'6'", name: "t_y", before: true }] }],
      },
      {
        path: "c/test_c.py",
        source: HAND,
        tests: [{ path: ["Case", "test_equal"], name: "test_computed", twins: [] }],
      },
    ]);
    expect([...answers.values()].map((r) => r.ok)).toEqual([false, false, false]);
  });
});

describe("python twins: py-durations held-out tests under real unittest", () => {
  test("each twin fails against the reference solution and each renamed original passes", async () => {
    const dir = join(scratch, "durations");
    cpSync(join(example, "repo"), dir, { recursive: true });
    cpSync(join(example, "heldout"), dir, { recursive: true });
    execFileSync("sh", [join(example, "solution.sh")], { cwd: dir });
    const file = "heldout_tests/test_durations_heldout.py";
    const source = readFileSync(join(dir, file), "utf8");
    const found = await tests(file, source);
    const cls = "ParseDurationHeldOut";
    const weeks = found.find((t) => t.path.join("::") === `${cls}::test_weeks`);
    const summed = found.find((t) => t.path.join("::") === `${cls}::test_parts_are_summed`);
    const w = weeks?.sites.find((s) => s.key === "0.0")?.replacements[0];
    const s = summed?.sites.find((x) => x.key === "1.0")?.replacements[2];
    if (!w || !s) throw new Error("the held-out file lost its sites");
    const content = await render({
      path: file,
      source,
      tests: [
        {
          path: [cls, "test_weeks"],
          name: "test_weeks_edge_41",
          twins: [{ site: "0.0", replacement: w, name: "test_weeks_parse_12", before: true }],
        },
        {
          path: [cls, "test_parts_are_summed"],
          name: "test_parts_are_summed_order_5",
          twins: [{ site: "1.0", replacement: s, name: "test_parts_are_summed_mixed_9", before: false }],
        },
      ],
    });
    writeFileSync(join(dir, file), content);
    const r = spawnSync(
      "/usr/bin/python3",
      ["-m", "unittest", "-v", "heldout_tests.test_durations_heldout"],
      {
        cwd: dir,
        encoding: "utf8",
        env: { PATH: "/usr/bin:/bin", PYTHONDONTWRITEBYTECODE: "1" },
      },
    );
    const status = new Map(
      [...r.stderr.matchAll(/^(\w+) \([\w.]+\) \.\.\. (ok|FAIL|ERROR)$/gm)].map((m) => [m[1], m[2]]),
    );
    expect(Object.fromEntries(status), r.stderr).toEqual({
      test_fractional_numbers: "ok",
      test_weeks_parse_12: "FAIL",
      test_weeks_edge_41: "ok",
      test_whitespace: "ok",
      test_minutes_versus_milliseconds: "ok",
      test_parts_are_summed_order_5: "ok",
      test_parts_are_summed_mixed_9: "FAIL",
      test_generated_combinations: "ok",
      test_rejects_malformed_input: "ok",
    });
  });
});
