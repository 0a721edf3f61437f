import { describe, expect, it } from "vitest";
import { InputError } from "../../../../src/core/kernel/errors.js";
import { literalGlob, missionTask } from "../../../../src/runner/task-source/mission/mission-case.js";
import {
  missionCaseDigest,
  parseMissionCase,
  pathProblem,
} from "../../../../src/runner/task-source/mission/mission-case-schema.js";

// The seed's example fixture, as JSON.
const SUM = `{
  "prompt": "Add the numbers in input.json and write the sum to answer.json.",
  "goal": "task:sum",
  "files": {"input.json": "[2,3]\\n"},
  "artifacts": {"answer.json": {"sum": 5}},
  "preserve": ["input.json"]
}
`;

const errorOf = (text: string, file = "case.yaml"): string => {
  try {
    parseMissionCase(text, file);
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    return (e as Error).message;
  }
  throw new Error("expected the fixture to be refused");
};

describe("parseMissionCase", () => {
  it("accepts the seed's JSON example and the same fixture in YAML", () => {
    const c = parseMissionCase(SUM, "sum.json");
    expect(c).toEqual({
      prompt: "Add the numbers in input.json and write the sum to answer.json.",
      goal: "task:sum",
      files: { "input.json": "[2,3]\n" },
      artifacts: { "answer.json": { sum: 5 } },
      preserve: ["input.json"],
    });
    const yaml = `prompt: Add the numbers in input.json and write the sum to answer.json.
goal: "task:sum"
files:
  input.json: "[2,3]\\n"
artifacts:
  answer.json: { sum: 5 }
preserve: [input.json]
`;
    expect(parseMissionCase(yaml, "sum.yaml")).toEqual(c);
  });

  it("names file, line and field for a wrong type, a missing field and an unknown key", () => {
    const msg = errorOf(`prompt: p
goal: g
files:
  a.txt: 12
artifacts: { out.json: 1 }
extra: true
`);
    expect(msg).toContain('case.yaml:4: files["a.txt"]: ');
    expect(msg).toContain("case.yaml:6: extra: unknown field");
    expect(errorOf("prompt: p\nfiles: {}\nartifacts: { o.json: 1 }\n")).toContain("goal");
    expect(errorOf("prompt: p\ngoal: g\nfiles: {}\nartifacts: {}\n")).toContain(
      "case.yaml:4: artifacts: a fixture needs at least one artifact",
    );
  });

  it("reports invalid JSON/YAML with its line, and duplicate keys", () => {
    expect(errorOf('{\n  "prompt": "p",\n  "goal": "g"\n  "files": {}\n}\n', "c.json")).toMatch(
      /^c\.json:\d+: not valid JSON or YAML/,
    );
    expect(errorOf("prompt: a\nprompt: b\n")).toMatch(/case\.yaml:2: not valid JSON or YAML/);
    expect(errorOf("- a\n- b\n")).toContain("a mission fixture is a mapping");
  });

  it("refuses a workspace key: the starting state is files, or --workspace DIR", () => {
    expect(errorOf(SUM.replace('"goal"', '"workspace": "./repo",\n  "goal"'), "sum.json")).toContain(
      "sum.json:3: workspace: a mission fixture carries its starting state in files",
    );
  });

  it("refuses a preserved path that is not a starting file, or that is an artifact", () => {
    expect(
      errorOf(SUM.replace('"preserve": ["input.json"]', '"preserve": ["input.json", "other.json"]')),
    ).toContain("case.yaml:6: preserve[1]: other.json is not a starting file");
    const both = `prompt: p
goal: g
files: { answer.json: "{}" }
artifacts: { answer.json: { sum: 5 } }
preserve: [answer.json]
`;
    expect(errorOf(both)).toContain("preserve[0]: answer.json is an artifact");
  });

  it("refuses unsafe paths in files, artifacts and preserve, naming the key's line", () => {
    const text = `prompt: p
goal: g
files:
  ok.txt: a
  ../up.txt: b
  /etc/passwd: c
  "a\\0b": d
artifacts:
  "x//y.json": 1
  ./out.json: 2
preserve: ["../up.txt"]
`;
    const msg = errorOf(text);
    expect(msg).toContain('case.yaml:5: files["../up.txt"]: a path may not contain a .. segment');
    expect(msg).toContain('case.yaml:6: files["/etc/passwd"]: an absolute path');
    expect(msg).toContain("case.yaml:7: ");
    expect(msg).toContain("NUL");
    expect(msg).toContain('case.yaml:9: artifacts["x//y.json"]: an empty path segment');
    expect(msg).toContain("(and 1 more)");
    for (const [p, ok] of [
      ["a/b.json", true],
      ["a\\b", false],
      ["a/./b", false],
      ["dir/", false],
      ["", false],
    ] as const)
      expect(pathProblem(p) === null, p).toBe(ok);
  });

  it("refuses a path that is a file and a folder at once", () => {
    expect(errorOf('prompt: p\ngoal: g\nfiles: { a: "x", a/b: "y" }\nartifacts: { o.json: 1 }\n')).toContain(
      "a is a file, so it cannot also be a folder",
    );
  });

  it("accepts criteria as strings or as mecha's artifact+pointer map, whose pointer must exist", () => {
    const base = (criteria: string) =>
      `prompt: p\ngoal: g\nfiles: {}\nartifacts: { answer.json: { review_first: true } }\n${criteria}`;
    expect(parseMissionCase(base("criteria: [the sum is right]\n"), "c").criteria).toEqual([
      "the sum is right",
    ]);
    const map =
      'criteria:\n  review:\n    artifact: answer.json\n    pointer: /review_first\n    context: { source: "x" }\n';
    expect(parseMissionCase(base(map), "c").criteria).toMatchObject({ review: { pointer: "/review_first" } });
    expect(errorOf(base(map.replace("/review_first", "/nope")))).toContain(
      "case.yaml:8: criteria.review.pointer: /nope is not present in answer.json's expected value",
    );
    expect(errorOf(base(map.replace("artifact: answer.json", "artifact: other.json")))).toContain(
      "criteria.review.artifact: other.json is not one of the artifacts",
    );
  });
});

describe("missionCaseDigest", () => {
  const c = parseMissionCase(SUM, "sum.json");
  it("covers the prompt, goal, files and preserve, not the expected values nor key order", () => {
    const d = missionCaseDigest(c);
    expect(missionCaseDigest({ ...c, artifacts: { "answer.json": { sum: 6 } } })).toBe(d);
    expect(missionCaseDigest({ ...c, artifacts: { "other.json": { sum: 5 } } })).not.toBe(d);
    expect(missionCaseDigest({ ...c, prompt: `${c.prompt} ` })).not.toBe(d);
    expect(missionCaseDigest({ ...c, goal: "task:other" })).not.toBe(d);
    expect(missionCaseDigest({ ...c, files: { "input.json": "[2,4]\n" } })).not.toBe(d);
    expect(missionCaseDigest({ ...c, preserve: [] })).not.toBe(d);
    expect(missionCaseDigest({ ...c, criteria: ["x"] })).not.toBe(d);
    const two = { ...c, files: { b: "1", a: "2" } };
    expect(missionCaseDigest(two)).toBe(missionCaseDigest({ ...c, files: { a: "2", b: "1" } }));
  });
});

describe("missionTask", () => {
  it("maps artifacts to summary-feedback JSON gates, preserve to protected + sha256, goal to file_exists", () => {
    const c = parseMissionCase(SUM, "sum.json");
    const task = missionTask(c, "case-sum", "/ws");
    expect(task.prompt).toBe(c.prompt);
    expect(task.deliverables).toEqual(["answer.json"]);
    expect(task.protected).toEqual(["input.json"]);
    expect(task.gates).toEqual([
      {
        id: "artifact-answer-json",
        static: { path: "answer.json", json_pointer: "", equals: { sum: 5 } },
        feedback: "summary",
      },
      {
        id: "preserve-input-json",
        static: {
          path: "input.json",
          sha256: "f0372ab93a15d250846d47ad168b03667fd47bb3edac007ad0ee41319fd4dd82",
        },
        feedback: "summary",
      },
    ]);
    expect(task.goal).toEqual({ condition: "task:sum", all: [{ file_exists: "answer.json" }] });
    // The expected value is nowhere but in its gate.
    const { gates, ...rest } = task;
    expect(JSON.stringify(rest)).not.toContain('"sum":5');
    expect(gates.length).toBe(2);
  });

  it("keeps gate ids unique and globs literal", () => {
    const c = parseMissionCase(
      'prompt: p\ngoal: g\nfiles: {}\nartifacts: { "a-b.json": 1, "a/b.json": 2, "x[1]*.json": 3 }\n',
      "c",
    );
    const task = missionTask(c, "case-c", "/ws");
    expect(task.gates.map((g) => g.id)).toEqual([
      "artifact-a-b-json",
      "artifact-a-b-json-2",
      "artifact-x-1-json",
    ]);
    expect(task.deliverables).toEqual(["a-b.json", "a/b.json", "x\\[1\\]\\*.json"]);
    expect(literalGlob("(a)!.json")).toBe("\\(a\\)\\!.json");
  });
});
