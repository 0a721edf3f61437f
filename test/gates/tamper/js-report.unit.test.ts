import { describe, expect, test } from "vitest";
import type { TamperPlan } from "../../../src/gates/tamper/adapter.js";
import { parseJestJson, readOnlyHint } from "../../../src/gates/tamper/js-frameworks.js";
import { widenNamePattern } from "../../../src/gates/tamper/js-name-filter.js";
import { mocha } from "../../../src/gates/tamper/mocha.js";
import { nodeTest } from "../../../src/gates/tamper/node-test.js";
import { parseTap } from "../../../src/gates/tamper/tape.js";
import type { PlantedCanary } from "../../../src/gates/tamper/test-report.js";

const ENV = "/gate";
const plan = (runner: TamperPlan["runner"], canary: PlantedCanary | null = null): TamperPlan => ({
  runner,
  cwd: ENV,
  argv: [],
  env: {},
  files: [],
  canary,
  reportsToPath: true,
});
/** The reporter's lines closed by its end mark, as loopgate's reporters write them. */
const report = (lines: string[]) => [...lines, JSON.stringify({ t: "end", n: lines.length })].join("\n");
const brief = (
  tests: { name: string; suites: string[]; file: string | null; outcome: string }[] | undefined,
) => tests?.map((t) => `${t.outcome} ${[t.file, ...t.suites, t.name].join("::")}`);

describe("node --test's report (the reporter's lines)", () => {
  const line = (o: Record<string, unknown>) =>
    JSON.stringify({ t: "pass", suites: [], parent: false, file: `${ENV}/test/a.test.js`, nesting: 0, ...o });
  const nested = [
    line({ name: "leaf one", suites: ["outer", "inner"], nesting: 2 }),
    line({
      name: "leaf two",
      suites: ["outer", "inner"],
      nesting: 2,
      t: "fail",
      failureType: "testCodeFailure",
    }),
    line({
      name: "inner",
      suites: ["outer"],
      nesting: 1,
      kind: "suite",
      t: "fail",
      failureType: "subtestsFailed",
    }),
    line({ name: "skipped", suites: ["outer"], nesting: 1, skip: true }),
    line({ name: "outer", kind: "suite", t: "fail", failureType: "subtestsFailed" }),
    line({ name: "child", suites: ["parent"], nesting: 1 }),
    line({ name: "parent", parent: true, t: "fail", failureType: "testCodeFailure" }),
    line({ name: "plain" }),
  ];

  test("leaves keep their describe blocks and parent tests; a parent counts only when it failed on its own", () => {
    const r = nodeTest.parse("", report(nested), plan("node-test"));
    expect(brief(r?.tests)).toEqual([
      "passed test/a.test.js::outer::inner::leaf one",
      "failed test/a.test.js::outer::inner::leaf two",
      "skipped test/a.test.js::outer::skipped",
      "passed test/a.test.js::parent::child",
      "failed test/a.test.js::parent",
      "passed test/a.test.js::plain",
    ]);
  });

  test("a file that reported no test is silent only when the canary was preloaded into it", () => {
    const file = `${ENV}/test/empty.test.js`;
    const pseudo = line({ name: file, file });
    const crashed = line({ name: `${ENV}/test/bad.test.js`, file: `${ENV}/test/bad.test.js`, t: "fail" });
    const without = nodeTest.parse("", report([pseudo, crashed]), plan("node-test"));
    expect(without?.silentFiles).toEqual([]);
    expect(brief(without?.tests)).toEqual(["failed test/bad.test.js::test/bad.test.js"]);
    const canary = { tests: ["order basic 12"], scope: "each_file" as const, token: "a !== b" };
    const withCanary = nodeTest.parse("", report([pseudo]), plan("node-test", canary));
    expect(withCanary?.silentFiles).toEqual(["test/empty.test.js"]);
  });

  test("the canary failed only with its own message; any other failure of it reads as a pass", () => {
    const canary = { tests: ["order basic 12"], scope: "each_file" as const, token: "x-1 !== y-2" };
    const named = `order basic 12 [${ENV}/test/a.test.js]`;
    const honest = line({ name: named, file: "/private/p.mjs", t: "fail", error: "x-1 !== y-2" });
    const silenced = line({ name: named, file: "/private/p.mjs", t: "fail", error: "3 silent" });
    expect(brief(nodeTest.parse("", report([honest]), plan("node-test", canary))?.tests)).toEqual([
      "failed test/a.test.js::order basic 12",
    ]);
    expect(brief(nodeTest.parse("", report([silenced]), plan("node-test", canary))?.tests)).toEqual([
      "passed test/a.test.js::order basic 12",
    ]);
  });

  test("a line that is not the reporter's, or no line at all, is unreadable", () => {
    const bad = JSON.stringify({ t: "pass", name: "x", nesting: 0, file: null });
    expect(nodeTest.parse("", report([nested[0] ?? "", "ok 1 - forged"]), plan("node-test"))).toBeNull();
    expect(nodeTest.parse("", report([bad]), plan("node-test"))).toBeNull();
    expect(nodeTest.parse("", report([]), plan("node-test"))).toBeNull();
    expect(nodeTest.parse("", "", plan("node-test"))).toBeNull();
    expect(nodeTest.parse("", null, plan("node-test"))).toBeNull();
  });

  test("lines written into the pipe by anything else, before, among or after the reporter's, make it unreadable", () => {
    const forged = line({ name: "leaf two", suites: ["outer", "inner"], nesting: 2 });
    const honest = report(nested);
    expect(nodeTest.parse("", honest, plan("node-test"))).not.toBeNull();
    expect(nodeTest.parse("", `${forged}\n${honest}`, plan("node-test"))).toBeNull();
    expect(nodeTest.parse("", `${honest}\n${forged}`, plan("node-test"))).toBeNull();
    expect(nodeTest.parse("", `${report([forged])}\n${honest}`, plan("node-test"))).toBeNull();
    expect(nodeTest.parse("", nested.join("\n"), plan("node-test"))).toBeNull();
  });
});

describe("Jest's and Vitest's JSON report", () => {
  const file = (name: string, status: string, results: unknown[]) => ({
    name: `${ENV}/${name}`,
    status,
    assertionResults: results,
  });
  const result = (title: string, status: string, ancestorTitles: string[] = []) => ({
    title,
    status,
    ancestorTitles,
  });

  test("a file that failed outside its tests (a hook, an exit) adds a failure; a failing test is enough on its own", () => {
    const json = {
      numTotalTests: 3,
      testResults: [
        file("a.test.js", "failed", [result("adds", "passed", ["add"])]),
        file("b.test.js", "failed", [result("subtracts", "failed"), result("later", "todo")]),
      ],
    };
    expect(brief(parseJestJson(JSON.stringify(json), ENV)?.tests)).toEqual([
      "passed a.test.js::add::adds",
      "failed a.test.js::a.test.js",
      "failed b.test.js::subtracts",
      "skipped b.test.js::later",
    ]);
  });

  test("a report whose total disagrees with the tests it lists, or that is malformed, is unreadable", () => {
    const listed = [file("a.test.js", "passed", [result("adds", "passed")])];
    expect(parseJestJson(JSON.stringify({ numTotalTests: 2, testResults: listed }), ENV)).toBeNull();
    expect(parseJestJson(JSON.stringify({ testResults: [{ status: "passed" }] }), ENV)).toBeNull();
    expect(
      parseJestJson(JSON.stringify({ testResults: [file("a.test.js", "passed", [{ title: 1 }])] }), ENV),
    ).toBeNull();
    expect(parseJestJson(JSON.stringify({ tests: [] }), ENV)).toBeNull();
    expect(parseJestJson("{", ENV)).toBeNull();
  });
});

describe("Mocha's report (loopgate's reporter)", () => {
  const row = (t: string, path: string[], file: string | null = `${ENV}/test/a.spec.js`) =>
    JSON.stringify({ t, path, file });
  test("the title path gives the describe blocks; a failed hook is a failure under its own title", () => {
    const text = report([
      row("pass", ["add", "adds"]),
      row("skip", ["add", "signs", "later"]),
      row("fail", ["add", '"before each" hook for "x"']),
      row("pass", ["top"], null),
    ]);
    expect(brief(mocha.parse("", text, plan("mocha"))?.tests)).toEqual([
      "passed test/a.spec.js::add::adds",
      "skipped test/a.spec.js::add::signs::later",
      'failed test/a.spec.js::add::"before each" hook for "x"',
      "passed ::top",
    ]);
  });

  test("a report without its end mark (the process ended first), or with a foreign line, is unreadable", () => {
    expect(mocha.parse("", row("pass", ["adds"]), plan("mocha"))).toBeNull();
    expect(mocha.parse("", report([row("pass", [])]), plan("mocha"))).toBeNull();
    expect(mocha.parse("", report(["ok 1 adds"]), plan("mocha"))).toBeNull();
    expect(
      mocha.parse("", `${row("pass", ["adds"])}\n${report([row("fail", ["adds"])])}`, plan("mocha")),
    ).toBeNull();
    expect(mocha.parse("", null, plan("mocha"))).toBeNull();
  });
});

describe("tape's TAP", () => {
  // tape 5's output for a file exercising each case (counted by hand: 8 assertions, 7 pass, 1 fail).
  const tap = [
    "TAP version 13",
    "# adds small",
    "ok 1 should be strictly equal",
    "# adds wrong",
    "not ok 2 sum",
    "  ---",
    "    operator: equal",
    "    at: Test.<anonymous> (/gate/test/a.js:3:31)",
    "  ...",
    "ok 3 should be truthy",
    "# parent",
    "# child",
    "ok 4 should be truthy",
    "# has skip assert",
    "ok 5 not now # SKIP",
    "ok 6 should be truthy",
    "# TODO todo one",
    "not ok 7 should be truthy # TODO",
    "# empty",
    "# b test",
    "ok 8 should be deeply equivalent",
    "",
    "1..8",
    "# tests 8",
    "# pass  7",
    "# fail  1",
    "",
  ];

  test("a test passes with at least one assertion and none failing; none at all, or todo, is skipped", () => {
    expect(brief(parseTap(tap.join("\n"))?.tests)).toEqual([
      "passed ::adds small",
      "failed ::adds wrong",
      "skipped ::parent",
      "passed ::child",
      "passed ::has skip assert",
      "skipped ::todo one",
      "skipped ::empty",
      "passed ::b test",
    ]);
  });

  test("all passing: tape prints no fail line", () => {
    const ok = ["TAP version 13", "# a", "ok 1 yes", "", "1..1", "# tests 1", "# pass  1", "", "# ok", ""];
    expect(brief(parseTap(ok.join("\n"))?.tests)).toEqual(["passed ::a"]);
  });

  test("closing counts that disagree with the lines listed, or are missing, make the output unreadable", () => {
    const without = (pred: (l: string) => boolean) => tap.filter((l) => !pred(l)).join("\n");
    expect(parseTap(without((l) => l === "ok 6 should be truthy"))).toBeNull();
    expect(parseTap(without((l) => l.startsWith("# tests")))).toBeNull();
    expect(parseTap(without((l) => l === "1..8"))).toBeNull();
    const forged = [...tap];
    forged.splice(3, 0, "ok 9 forged");
    expect(parseTap(forged.join("\n"))).toBeNull();
    const flipped = tap.map((l) => (l === "not ok 2 sum" ? "ok 2 sum" : l));
    expect(parseTap(flipped.join("\n"))).toBeNull();
    expect(parseTap("")).toBeNull();
  });
});

describe("widening a name pattern for renamed tests", () => {
  const renamed = new Map([
    ["a.test.js::add::adds", ["a.test.js::add::adds x 1", "a.test.js::add::adds y 2"]],
    ["a.test.js::add::subtracts", ["a.test.js::add::subtracts x 3"]],
  ]);

  test("only tests whose old name the pattern selects are added, by their full or their own names", () => {
    expect(widenNamePattern("^add adds$", renamed, "full")).toBe(
      "(?:^add adds$)|^(?:add adds x 1|add adds y 2)$",
    );
    expect(widenNamePattern("^adds$", renamed, "name")).toBe("(?:^adds$)|^(?:adds x 1|adds y 2)$");
    const wide = new RegExp(widenNamePattern("^add adds$", renamed, "full"));
    expect(["add adds x 1", "add adds y 2", "add subtracts x 3"].map((n) => wide.test(n))).toEqual([
      true,
      true,
      false,
    ]);
  });

  test("a pattern that selects none of them, or does not parse, is left as it is", () => {
    expect(widenNamePattern("^multiplies", renamed, "full")).toBe("^multiplies");
    expect(widenNamePattern("(", renamed, "full")).toBe("(");
  });
});

test("a run that failed writing into the read-only gate environment gets a hint naming writable: true", () => {
  expect(readOnlyHint("Error: EROFS: read-only file system, open '/gate/x'")).toContain("writable: true");
  expect(readOnlyHint("Error: ENOENT: no such file")).toBeNull();
});
