import { describe, expect, it } from "vitest";
import { isDifferentialGate, parseTask } from "../../../src/core/task/task.js";

const head = "id: t\nprompt: p\nworkspace: ./repo\noracle: ./solution.sh\ngates:\n";
const gate = `  - id: cli
    differential:
      run: ["sh", "bin/tool", "\${tree}"]
      cases:
        - { name: a, args: ["x"], stdin: "in\\n" }
`;

function errorOf(text: string): string {
  try {
    parseTask(text, "task.yaml");
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error("expected parseTask to reject");
}

describe("differential gates in the task file", () => {
  it("parses with the documented defaults", () => {
    const g = parseTask(head + gate, "task.yaml").gates[0];
    if (!g || !isDifferentialGate(g)) throw new Error("not differential");
    expect(g).toEqual({
      id: "cli",
      differential: {
        run: ["sh", "bin/tool", "${tree}"],
        cases: [{ name: "a", args: ["x"], stdin: "in\n" }],
        compare: "exact",
        compare_exit_code: true,
        stderr: "ignore",
      },
      timeout: "30s",
      feedback: "summary",
    });
  });

  it("is a load error without the task's oracle, naming the gate's line and field", () => {
    expect(errorOf(head.replace("oracle: ./solution.sh\n", "") + gate)).toContain(
      "task.yaml:7: gates[0].differential: a differential gate compares against the oracle's tree",
    );
  });

  it("needs at least one case or a generator", () => {
    expect(errorOf(`${head}  - id: cli\n    differential: { run: [sh] }\n`)).toContain(
      "task.yaml:7: gates[0].differential.cases: a differential gate needs at least one case, or a generator",
    );
    const gen = `${head}  - id: cli\n    differential: { run: [sh], generator: { run: [sh, gen.sh, "\${seed}"] } }\n`;
    const g = parseTask(gen, "task.yaml").gates[0];
    expect(g && isDifferentialGate(g) && g.differential.generator).toEqual({
      run: ["sh", "gen.sh", "${seed}"],
      count: 20,
    });
  });

  it("names the line and field of a bad case, a bad normaliser and an unknown key", () => {
    expect(errorOf(head + gate.replace('stdin: "in\\n"', "stdin: 7"))).toMatch(
      /task\.yaml:10: gates\[0\]\.differential\.cases\[0\]\.stdin: .*expected string/,
    );
    expect(errorOf(head + gate.replace("      cases:", "      compare: fuzzy\n      cases:"))).toMatch(
      /task\.yaml:9: gates\[0\]\.differential\.compare: .*"exact"/,
    );
    expect(errorOf(head + gate.replace("      cases:", "      expected: [x]\n      cases:"))).toMatch(
      /task\.yaml:\d+: gates\[0\]\.differential: .*expected/,
    );
    expect(errorOf(`${head}${gate}    timeout: soon\n`)).toContain(
      "task.yaml:11: gates[0].timeout: expected a duration",
    );
  });

  it("a case without run needs the gate's run; case names are unique", () => {
    const noRun = `${head}  - id: cli\n    differential:\n      cases:\n        - { name: a }\n`;
    expect(errorOf(noRun)).toContain("gates[0].differential.cases[0].run: this case has no run");
    const dup = gate.replace(
      '        - { name: a, args: ["x"], stdin: "in\\n" }',
      "        - { name: a }\n        - { name: a }",
    );
    expect(errorOf(head + dup)).toContain("gates[0].differential.cases[1].name: duplicate case name a");
  });

  it("refuses unknown template parameters, in run, args and the generator", () => {
    expect(errorOf(head + gate.replace("${tree}", "${workspace}"))).toMatch(
      /gates\[0\]\.differential\.run\[2\]: unknown parameter \$\{workspace\}; known here: \$\{tree\}, \$\{files\}/,
    );
    expect(errorOf(head + gate.replace('args: ["x"]', 'args: ["${seed}"]'))).toContain(
      "gates[0].differential.cases[0].args[0]: unknown parameter ${seed}",
    );
    const gen = `${head}  - id: cli\n    differential: { run: [sh], generator: { run: [sh, "\${tree}"] } }\n`;
    expect(errorOf(gen)).toContain("gates[0].differential.generator.run[1]: unknown parameter ${tree}");
  });

  it("refuses feedback: log, which would show the oracle's outputs to the builder", () => {
    expect(errorOf(`${head}${gate}    feedback: log\n`)).toContain(
      "task.yaml:11: gates[0].feedback: a differential gate's log holds the oracle's expected outputs",
    );
  });

  it("refuses case file names that escape the case folder", () => {
    for (const bad of ["../x", "/etc/passwd", "a//b", "./a"])
      expect(errorOf(head + gate.replace('stdin: "in\\n"', `files: { "${bad}": "" }`))).toContain(
        "a case file name is relative to the case's folder",
      );
  });

  it("keeps subprocess and static gate errors specific (no union noise)", () => {
    expect(errorOf(`${head}  - id: u\n    run: [x]\n    timeout: [1]\n`)).toMatch(/gates\[0\]\.timeout: /);
    expect(errorOf(`${head}  - id: s\n    static: { path: 3, exists: true }\n`)).toMatch(
      /gates\[0\]\.static\.path: /,
    );
  });
});
