import { describe, expect, it } from "vitest";
import { cliArgv } from "../../../src/runner/goal/goal-derived.js";

describe("cliArgv: core/goal's suggested command lines in the CLI's own form", () => {
  it("a todo's run is `todo run GOAL TODO`, an acceptance run is `goal accept GOAL`", () => {
    expect(cliArgv(["loopgate", "run", "/t/task.yaml", "--goal", "g1", "--todo", "todo_abc"])).toEqual([
      "loopgate",
      "todo",
      "run",
      "g1",
      "todo_abc",
    ]);
    expect(cliArgv(["loopgate", "run", "/t/task.yaml#a", "--goal", "g1", "--acceptance", "x"])).toEqual([
      "loopgate",
      "goal",
      "accept",
      "g1",
    ]);
  });

  it("leaves every other command line as it is", () => {
    const argv = ["loopgate", "gate", "approve", "g1", "todo_gate"];
    expect(cliArgv(argv)).toEqual(argv);
    expect(cliArgv(["loopgate", "run", "task.yaml", "--oracle"])).toEqual([
      "loopgate",
      "run",
      "task.yaml",
      "--oracle",
    ]);
  });
});
