import { describe, expect, it } from "vitest";
import { parseTask } from "../../src/core/task/task.js";
import { buildGateRegistry } from "../../src/gates/gate-registry.js";

const yaml = `
id: slugify-unicode
prompt: fix slugify
workspace: ./repo
gates:
  - id: unit
    run: ["node", "--test", "test/"]
    heldout: ./heldout
    timeout: 30s
    feedback: log
  - id: no-debug
    static: { path: src/slugify.js, not_match: "console\\\\.log" }
  - id: lint
    run: ["npx", "eslint", "."]
    heldout: ../shared/lint-config
    writable: true
  - id: smoke
    run: ["sh", "-c", "true"]
`;

describe("buildGateRegistry", () => {
  const gates = buildGateRegistry(parseTask(yaml, "task.yaml"), "/srv/tasks/slugify");

  it("keeps declaration order and kinds", () => {
    expect(gates.map((g) => [g.id, g.kind])).toEqual([
      ["unit", "subprocess"],
      ["no-debug", "static"],
      ["lint", "subprocess"],
      ["smoke", "subprocess"],
    ]);
  });

  it("resolves heldout against the task's folder, not the process cwd", () => {
    expect(gates[0]?.heldout).toBe("/srv/tasks/slugify/heldout");
    expect(gates[2]?.heldout).toBe("/srv/tasks/shared/lint-config");
  });

  it("a gate without heldout, and a static gate, have none", () => {
    expect(gates[3]?.heldout).toBeNull();
    expect(gates[1]?.heldout).toBeNull();
  });

  it("carries feedback and writable, with the defaults where unset", () => {
    expect(gates.map((g) => [g.feedback, g.writable])).toEqual([
      ["log", false],
      ["summary", false],
      ["summary", true],
      ["summary", false],
    ]);
  });
});

describe("buildGateRegistry: differential gates", () => {
  it("registers a differential gate with no overlay, no canary and a read-only environment", () => {
    const task = parseTask(
      `id: t\nprompt: p\nworkspace: ./repo\noracle: ./solution.sh\ngates:\n  - id: cli\n    differential: { run: [sh, bin/x], cases: [{ args: [a] }] }\n    feedback: none\n`,
      "task.yaml",
    );
    const [g] = buildGateRegistry(task, "/srv/tasks/t");
    expect(g).toMatchObject({
      id: "cli",
      kind: "differential",
      feedback: "none",
      heldout: null,
      canary: null,
      writable: false,
    });
  });
});
