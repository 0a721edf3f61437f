import { describe, expect, it } from "vitest";
import { globProblem } from "../../../src/core/kernel/glob-syntax.js";
import { describeUncovered, uncoveredProtected } from "../../../src/core/observation/glob-coverage.js";
import { parseTask } from "../../../src/core/task/task.js";

describe("globProblem: a glob that cannot protect what it names is refused, saying why", () => {
  const bad: [string, RegExp][] = [
    ["tests/[**", /\[ at column 7 is never closed \(expected \]\)/],
    ["tests/{a,b", /\{ at column 7 is never closed/],
    ["tests/@(a|b", /\( at column 8 is never closed/],
    ["tests/a]", /\] at column 8 closes nothing; escape it as \\\]/],
    ["tests/a}", /\} at column 8 closes nothing/],
    ["src/{a,b]}", /\] at column 9 closes nothing \(the \{ at column 5 is still open\)/],
    ["src/{}", /\{\} at column 5 is empty/],
    ["tests//x", /empty path segment/],
    ["tests/./x", /"\." path segment/],
    ["src/**.js", /\*\* at column 5 is not a whole path segment/],
    ["a**/b", /not a whole path segment/],
    ["tests/***", /not a whole path segment/],
    ["tests/[a/b]", /spans a \//],
    ["tests/x\\", /lone \\/],
    [" tests/**", /whitespace/],
    ["./", /names no path/],
  ];
  for (const [glob, why] of bad)
    it(`refuses ${JSON.stringify(glob)}`, () => expect(globProblem(glob)).toMatch(why));

  const good = [
    "tests/**",
    "tests",
    "tests/",
    "./src/**/*.js",
    "package.json",
    "src/*.{js,ts}",
    "src/{a,{b,c}}/**",
    "**/c",
    "test/[abc]*.js",
    "test/[]]x",
    "test/[!]a]x",
    "src/@(a|b).js",
    "docs/\\[draft\\].md",
    "a\\{b",
  ];
  for (const glob of good) it(`accepts ${JSON.stringify(glob)}`, () => expect(globProblem(glob)).toBeNull());

  it("is a load error with file:line:field", () => {
    const text =
      'id: a\nprompt: p\nworkspace: w\ndeliverables: ["src/**"]\nprotected:\n  - "tests/**"\n  - "tests/[**"\ngates:\n  - { id: u, run: [x] }\n';
    expect(() => parseTask(text, "task.yaml")).toThrow(
      /task\.yaml:7: protected\[1\]: not a valid glob "tests\/\[\*\*": the \[ at column 7 is never closed/,
    );
    const deliv =
      'id: a\nprompt: p\nworkspace: w\ndeliverables: ["src/**.js"]\ngates:\n  - { id: u, run: [x] }\n';
    expect(() => parseTask(deliv, "task.yaml")).toThrow(
      /task\.yaml:4: deliverables\[0\]: .*not a whole path segment/,
    );
  });
});

describe("uncoveredProtected: protected globs that match nothing in the workspace", () => {
  const paths = [
    "README.md",
    "durations",
    "durations/__init__.py",
    "durations/parser.py",
    "tests",
    "tests/__init__.py",
    "tests/test_durations.py",
    "package.json",
  ];

  it("finds nothing wrong with globs that match", () => {
    expect(uncoveredProtected(["tests/**", "tests", "package.json", "**/*.py", "./tests/"], paths)).toEqual(
      [],
    );
  });

  it("names the glob and suggests the closest folder: test/** → tests/**", () => {
    const [u, ...rest] = uncoveredProtected(["tests/**", "test/**"], paths);
    expect(rest).toEqual([]);
    expect(u).toEqual({ glob: "test/**", closest: "tests", suggestion: "tests/**" });
    expect(describeUncovered(u as NonNullable<typeof u>, "./repo")).toBe(
      "protected glob test/** matches nothing in repo/; did you mean tests/**?",
    );
  });

  it("corrects a nested segment and a file name, keeping the rest of the glob", () => {
    expect(
      uncoveredProtected(
        ["durations/tset/**", "pakage.json", "Tests/*.py"],
        [...paths, "durations/test", "durations/test/a.py"],
      ),
    ).toEqual([
      { glob: "durations/tset/**", closest: "durations/test", suggestion: "durations/test/**" },
      { glob: "pakage.json", closest: "package.json", suggestion: "package.json" },
      { glob: "Tests/*.py", closest: "tests", suggestion: "tests/*.py" },
    ]);
  });

  it("names the closest existing folder when no rename would match", () => {
    const found = uncoveredProtected(["tests/*.spec.js", "zzz/**", "tests/unit/**"], paths);
    expect(found).toEqual([
      { glob: "tests/*.spec.js", closest: "tests", suggestion: null },
      { glob: "zzz/**", closest: "", suggestion: null },
      { glob: "tests/unit/**", closest: "tests", suggestion: null },
    ]);
    expect(found.map((u) => describeUncovered(u, "repo"))).toEqual([
      "protected glob tests/*.spec.js matches nothing in repo/; the closest existing folder is tests/",
      "protected glob zzz/** matches nothing in repo/; the closest existing folder is repo/",
      "protected glob tests/unit/** matches nothing in repo/; the closest existing folder is tests/",
    ]);
    expect(describeUncovered(uncoveredProtected(["a"], [])[0] as never, "repo")).toBe(
      "protected glob a matches nothing in repo/, which is empty",
    );
  });
});
