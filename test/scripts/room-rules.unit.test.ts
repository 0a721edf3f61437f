import { describe, expect, it } from "vitest";
import type { ImportGraph } from "../../scripts/import-rules.js";
import { checkRooms, roomOf, roomViolation, unmirroredTests } from "../../scripts/room-rules.js";

// A synthetic layout, so the rules are tested apart from today's tree: core has three rooms, lowest first.
const rooms = { core: ["kernel", "run", "goal/turn", "goal"], cli: ["output", "commands", "."] };

const graph = (edges: Record<string, string[]>): ImportGraph => {
  const g = new Map<string, string[]>(Object.entries(edges));
  for (const tos of Object.values(edges)) for (const t of tos) if (!g.has(t)) g.set(t, []);
  return g;
};

describe("rooms", () => {
  it("a file's room is its folder under the layer's; root files are room .", () => {
    expect(roomOf("src/core/goal/turn/turn-state.ts")).toEqual({ layer: "core", room: "goal/turn" });
    expect(roomOf("src/cli/main.ts")).toEqual({ layer: "cli", room: "." });
    expect(roomOf("scripts/x.ts")).toBeNull();
  });

  it("a room imports itself and rooms below it", () => {
    expect(roomViolation("src/core/run/a.ts", "src/core/kernel/b.ts", rooms)).toBeNull();
    expect(roomViolation("src/core/goal/g.ts", "src/core/goal/turn/t.ts", rooms)).toBeNull();
    expect(roomViolation("src/core/goal/g.ts", "src/core/goal/h.ts", rooms)).toBeNull();
    expect(roomViolation("src/cli/main.ts", "src/cli/commands/run.ts", rooms)).toBeNull();
  });

  it("a room importing one above it is refused, naming both", () => {
    const v = roomViolation("src/core/kernel/b.ts", "src/core/run/a.ts", rooms);
    expect(v?.kind).toBe("room_order");
    expect(v?.message).toContain("src/core/kernel/b.ts → src/core/run/a.ts");
    expect(v?.message).toContain("room kernel of core/ imports room run");
    // a sub-folder and its parent are two rooms: only one direction is allowed
    expect(roomViolation("src/core/goal/turn/t.ts", "src/core/goal/g.ts", rooms)?.kind).toBe("room_order");
    // root files sit where the order puts them: here above commands, so commands may not import them
    expect(roomViolation("src/cli/commands/run.ts", "src/cli/main.ts", rooms)?.kind).toBe("room_order");
  });

  it("two rooms importing each other always break the order", () => {
    const g = graph({
      "src/core/run/a.ts": ["src/core/goal/g.ts"],
      "src/core/goal/g.ts": ["src/core/run/a.ts"],
    });
    const found = checkRooms(g, [], rooms);
    expect(found.filter((v) => v.kind === "room_order" || v.kind === "run_imports_goal")).toHaveLength(1);
    expect(found.map((v) => v.message).join("\n")).toContain("src/core/run/a.ts → src/core/goal/g.ts");
  });

  it("a folder the order does not list is reported once per file, not let through", () => {
    const g = graph({ "src/core/loose/x.ts": ["src/core/kernel/b.ts"] });
    const found = checkRooms(g, [], rooms);
    expect(found.map((v) => v.kind)).toEqual(["unknown_room"]);
    expect(found[0]?.message).toContain("src/core/loose/");
  });

  it("a layer with no order is one room", () => {
    expect(roomViolation("src/gates/a/x.ts", "src/gates/b/y.ts", rooms)).toBeNull();
  });

  it("run code never imports goal code, across layers too", () => {
    expect(roomViolation("src/runner/run/resume.ts", "src/runner/goal/workspace.ts", rooms)?.kind).toBe(
      "run_imports_goal",
    );
    expect(roomViolation("src/core/run/state.ts", "src/core/goal/turn/t.ts", rooms)?.kind).toBe(
      "run_imports_goal",
    );
    expect(roomViolation("src/runner/goal/x.ts", "src/core/run/state.ts", rooms)).toBeNull();
    // a file named run-… at a layer's root is not a run room
    expect(roomViolation("src/runner/run-task.ts", "src/core/goal/g.ts", rooms)).toBeNull();
  });

  it("export * is refused wherever it is", () => {
    const found = checkRooms(graph({ "src/core/kernel/b.ts": [] }), ["src/core/goal/index.ts"], rooms);
    expect(found).toEqual([
      { kind: "export_star", message: "src/core/goal/index.ts: `export *`; export the names one by one" },
    ]);
  });
});

describe("tests mirror the source", () => {
  const present = new Set(["src/core/goal", "src/store", "scripts", "src"]);
  const exists = (d: string) => present.has(d);

  it("test/<path>/ must be src/<path>/; test/scripts is scripts/; e2e and support are the suite's own", () => {
    expect(
      unmirroredTests(["test/core/goal", "test/store", "test/scripts", "test/e2e", "test/support/x"], exists),
    ).toEqual([]);
  });

  it("a test folder with no source folder is named", () => {
    const found = unmirroredTests(["test/fixtures-case", "test/agent/loop"], exists);
    expect(found.map((v) => v.kind)).toEqual(["test_not_mirrored", "test_not_mirrored"]);
    expect(found[0]?.message).toContain("src/fixtures-case/ does not exist");
    expect(found[1]?.message).toContain("src/agent/loop/ does not exist");
  });
});
