import { describe, expect, it } from "vitest";
import { InputError } from "../../../src/core/kernel/errors.js";
import { judgeRules } from "../../../src/core/task/judge-spec.js";
import { parseTask } from "../../../src/core/task/task.js";

const valid = `id: demo
prompt: fix it
workspace: ./repo
gates:
  - id: unit
    run: ["node", "--test", "\${gate_env}/test"]
`;

function errorOf(text: string): string {
  try {
    parseTask(text, "task.yaml");
  } catch (e) {
    expect(e).toBeInstanceOf(InputError);
    return (e as Error).message;
  }
  throw new Error("expected parseTask to reject");
}

describe("task file parsing", () => {
  it("applies the documented defaults", () => {
    const t = parseTask(valid, "task.yaml");
    expect(t.budget.attempts).toBe(3);
    expect(t.deliverables).toEqual([]);
    const g = t.gates[0];
    expect(g && "run" in g ? [g.timeout, g.feedback, g.writable] : null).toEqual(["60s", "summary", false]);
  });

  it("accepts JSON as well as YAML", () => {
    const t = parseTask(
      JSON.stringify({
        id: "j",
        prompt: "p",
        workspace: "w",
        gates: [{ id: "s", static: { path: "a", exists: true } }],
      }),
      "t.json",
    );
    expect(t.id).toBe("j");
  });

  it("names the file, line and field of a bad value", () => {
    const msg = errorOf(`${valid}    timeout: soon\n`);
    expect(msg).toContain("task.yaml:7: gates[0].timeout: expected a duration");
  });

  it("rejects unknown template parameters with the list of known ones", () => {
    expect(errorOf(valid.replace("${gate_env}", "${secret_dir}"))).toMatch(
      /task\.yaml:6: gates\[0\]\.run\[2\]: unknown parameter \$\{secret_dir\}/,
    );
  });

  it("rejects a task without gates, because nothing could declare it done", () => {
    expect(errorOf("id: a\nprompt: p\nworkspace: w\ngates: []\n")).toContain(
      "gates: a task needs at least one gate",
    );
  });

  it("rejects a static gate with two checks or none", () => {
    expect(
      errorOf(
        "id: a\nprompt: p\nworkspace: w\ngates:\n  - id: s\n    static: { path: a, exists: true, absent: true }\n",
      ),
    ).toContain("exactly one check");
    expect(errorOf("id: a\nprompt: p\nworkspace: w\ngates:\n  - id: s\n    static: { path: a }\n")).toContain(
      "found none",
    );
  });

  it("refuses a static gate's path outside the gate environment, naming line and field", () => {
    const staticOn = (path: string) =>
      `id: a\nprompt: p\nworkspace: w\ngates:\n  - id: s\n    static:\n      path: ${JSON.stringify(path)}\n      exists: true\n`;
    for (const [path, why] of [
      ["/etc/passwd", "is absolute"],
      ["../../x", "has a .. segment"],
      ["src/../../x", "has a .. segment"],
      ["a/..", "has a .. segment"],
      ["a\0b", "contains a NUL byte"],
    ]) {
      const msg = errorOf(staticOn(path as string));
      expect(msg, path).toContain(`task.yaml:7: gates[0].static.path: ${JSON.stringify(path)} ${why}`);
    }
    for (const path of ["src/app.js", "./src/app.js", "a..b/c", "..hidden", "dir/"])
      expect(() => parseTask(staticOn(path), "task.yaml"), path).not.toThrow();
  });

  it("rejects duplicate gate ids, unknown keys, bad globs and escaping globs", () => {
    expect(errorOf(`${valid}  - id: unit\n    run: [x]\n`)).toContain("duplicate gate id unit");
    expect(errorOf(`${valid}colour: blue\n`)).toMatch(/colour|Unrecognized/);
    expect(errorOf(`${valid}protected: ["../outside/**"]\n`)).toContain("protected[0]");
  });

  it("accepts judge rules (strings get ids rule-1, rule-2) and refuses an empty or duplicated rule list", () => {
    const t = parseTask(
      `${valid}judge: { rules: ["Keep the API.", { id: api, text: "No new deps.", private: true }] }\n`,
      "task.yaml",
    );
    expect(judgeRules(t)).toEqual([
      { id: "rule-1", text: "Keep the API.", private: false },
      { id: "api", text: "No new deps.", private: true },
    ]);
    expect(errorOf(`${valid}judge: { rules: [] }\n`)).toContain(
      "judge.rules: a judge needs at least one rule",
    );
    expect(errorOf(`${valid}judge: { rules: [{ id: a, text: x }, { id: a, text: y }] }\n`)).toContain(
      "duplicate rule id a",
    );
  });

  it("reports YAML syntax errors with their line", () => {
    expect(errorOf("id: a\nprompt: [unclosed\n")).toMatch(/task\.yaml:\d+: not valid YAML/);
  });
});
