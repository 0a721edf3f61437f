// How `task from-commit` splits a commit into held-out tests and the fix, and what the task protects
// and delivers. Every expectation below is written out by hand from the rule in the brief.
import { describe, expect, it } from "vitest";
import {
  deliverablesOf,
  protectedOf,
  splitCommit,
  taskIdFor,
  testMatcher,
  testRoot,
} from "../../src/runner/from-commit/classify.js";

describe("testMatcher (default globs)", () => {
  const isTest = testMatcher([]);
  it.each([
    "tests/test_parser.py",
    "test/slugify.test.js",
    "pkg/tests/data/case.json",
    "src/__tests__/a.js",
    "src/parser_test.py",
    "test_top.py",
    "lib/x.spec.ts",
    "lib/x.test.mjs",
    "conftest.py",
    "pkg/server_test.go",
  ])("%s is a test file", (p) => expect(isTest(p)).toBe(true));
  it.each([
    "src/parser.py",
    "README.md",
    "docs/testing.md",
    "lib/latest.js",
    "contest.py",
    "src/testing/util.py",
    "package.json",
  ])("%s is not", (p) => expect(isTest(p)).toBe(false));

  it("--test-glob replaces the defaults", () => {
    const only = testMatcher(["checks/**"]);
    expect(only("checks/a.py")).toBe(true);
    expect(only("tests/test_a.py")).toBe(false);
  });
});

describe("splitCommit", () => {
  it("holds out added and changed tests, never deleted ones; everything else is the fix", () => {
    const split = splitCommit(
      [
        { status: "M", path: "src/a.py" },
        { status: "A", path: "tests/test_new.py" },
        { status: "M", path: "tests/test_old.py" },
        { status: "D", path: "tests/test_gone.py" },
        { status: "D", path: "src/dead.py" },
      ],
      testMatcher([]),
    );
    expect(split).toEqual({
      tests: ["tests/test_new.py", "tests/test_old.py"],
      fix: ["src/a.py", "src/dead.py"],
    });
  });
});

describe("deliverablesOf", () => {
  it("is each touched top folder once, and root files by name", () => {
    expect(deliverablesOf(["src/a/b.py", "src/c.py", "lib/x.js", "setup.py"])).toEqual([
      "lib/**",
      "setup.py",
      "src/**",
    ]);
  });
  it("escapes glob characters of literal names", () => {
    expect(deliverablesOf(["[draft].py"])).toEqual(["\\[draft\\].py"]);
  });
});

describe("protectedOf", () => {
  const isTest = testMatcher([]);
  const parent = [
    "package.json",
    "pytest.ini",
    "src/app.py",
    "src/app.test.js",
    "tests/test_app.py",
    "tests/data/in.txt",
    "pkg/tests/test_pkg.py",
    "vitest.config.ts",
    "README.md",
  ];
  it("protects test folders, colocated test files and root configuration present in the parent tree", () => {
    expect(protectedOf(parent, isTest, ["src/app.py"])).toEqual([
      "package.json",
      "pkg/tests/**",
      "pytest.ini",
      "src/app.test.js",
      "tests/**",
      "vitest.config.ts",
    ]);
  });
  it("leaves a configuration file the fix changes to the fix", () => {
    expect(protectedOf(parent, isTest, ["src/app.py", "package.json"])).not.toContain("package.json");
  });
});

describe("testRoot", () => {
  it("ends at the first test folder", () => {
    expect(testRoot("pkg/tests/a/test_b.py")).toBe("pkg/tests");
    expect(testRoot("test/x.js")).toBe("test");
    expect(testRoot("src/x.test.js")).toBeNull();
  });
});

describe("taskIdFor", () => {
  it("is the short sha and a slug of the subject", () => {
    expect(taskIdFor("3FA9C1E", "Fix: parse_duration() on “250ms”!")).toBe(
      "3fa9c1e-fix-parse-duration-on-250ms",
    );
    expect(taskIdFor("abc1234", "Crème brûlée")).toBe("abc1234-creme-brulee");
    expect(taskIdFor("abc1234", "!!!")).toBe("abc1234");
  });
  it("cuts a long subject without leaving a trailing dash", () => {
    const id = taskIdFor("abc1234", `${"word ".repeat(30)}end`);
    expect(id.length).toBeLessThanOrEqual("abc1234-".length + 48);
    expect(id.endsWith("-")).toBe(false);
    expect(id).toMatch(/^[a-z0-9][a-z0-9._-]*$/);
  });
});
