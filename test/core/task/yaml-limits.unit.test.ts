import { describe, expect, it } from "vitest";
import { parseScript } from "../../../src/agent/models/script-file.js";
import { InputError } from "../../../src/core/kernel/errors.js";
import { parseTask } from "../../../src/core/task/task.js";
import { parseManifest } from "../../../src/experiments/manifest.js";
import { parseMissionCase } from "../../../src/runner/task-source/mission/mission-case-schema.js";

// A "billion laughs": nine levels of nine aliases, 9^7 strings once expanded. The first alias is on line 3.
const bomb = (key: string) =>
  [
    "# an alias bomb",
    'a: &a ["x","x","x","x","x","x","x","x","x"]',
    "b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]",
    "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]",
    "d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]",
    "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]",
    "f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]",
    "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]",
    `${key}: *g`,
  ].join("\n");

describe("parser limits are ordinary file errors with file:line", () => {
  const parsers: [string, (text: string, file: string) => unknown, string][] = [
    ["task file", parseTask, "prompt"],
    ["scripted model file", parseScript, "responses"],
    ["mission fixture", parseMissionCase, "prompt"],
    ["experiment manifest", parseManifest, "arms"],
  ];
  for (const [what, parse, key] of parsers)
    it(`a ${what} with an alias bomb is refused as bad input, naming the file and the first alias's line`, () => {
      const attempt = () => parse(bomb(key), "f.yaml");
      expect(attempt).toThrow(InputError);
      expect(attempt).toThrow(
        /^f\.yaml:3: the YAML parser refuses to expand this file \(Excessive alias count/,
      );
    });

  it("a few aliases stay allowed (a bounded expansion is ordinary YAML)", () => {
    const text = "x: &x value\nid: t\nprompt: *x\n";
    expect(() => parseTask(text, "t.yaml")).not.toThrow(/refuses to expand/);
  });
});
