import { describe, expect, it } from "vitest";
import { type CliSurface, exampleProblems } from "../../src/selftest/readme-examples.js";

const cli: CliSurface = {
  commands: ["run", "task check", "goal new", "goal vision show"],
  flags: ["--json", "--store"],
  exists: () => true,
};
const example = (text: string) => ({ line: 1, text, words: text.split(" ") });
const unknown = (text: string, head: string) => [`line 1: \`${text}\`: no command "${head}" in --help`];

describe("README examples: the command words must be a command of --help", () => {
  it("accepts one-, two- and three-word commands followed by arguments", () => {
    expect(exampleProblems(example("loopgate run task.yaml --json"), cli)).toEqual([]);
    expect(exampleProblems(example("loopgate task check task.yaml"), cli)).toEqual([]);
    expect(exampleProblems(example("loopgate goal vision show g1 --store /tmp/s"), cli)).toEqual([]);
  });

  it("refuses words that are not a command, even when they start like one", () => {
    for (const [text, head] of [
      ["loopgate goal vision patch g1", "goal"],
      ["loopgate goal", "goal"],
      ["loopgate runs", "runs"],
    ] as const)
      expect(exampleProblems(example(text), cli)).toEqual(unknown(text, head));
  });
});
