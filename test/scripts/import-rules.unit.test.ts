import { describe, expect, it } from "vitest";
import { importSpecifiers } from "../../scripts/check-imports.js";
import {
  checkImports,
  findCycles,
  folderOf,
  type ImportGraph,
  layerViolation,
  storeDoorViolation,
} from "../../scripts/import-rules.js";

const graph = (edges: Record<string, string[]>): ImportGraph => {
  const g = new Map<string, string[]>(Object.entries(edges));
  for (const tos of Object.values(edges)) for (const t of tos) if (!g.has(t)) g.set(t, []);
  return g;
};
const kinds = (g: ImportGraph, allowed = [] as Parameters<typeof checkImports>[1]) =>
  checkImports(g, allowed).map((v) => v.kind);

describe("the layer rule", () => {
  it("a file's folder is its first directory under src/", () => {
    expect(folderOf("src/core/events/run-events.ts")).toBe("core");
    expect(folderOf("src/cli/main.ts")).toBe("cli");
    expect(folderOf("scripts/check-imports.ts")).toBeNull();
  });

  it("down the list and inside a folder are allowed", () => {
    expect(layerViolation("src/cli/main.ts", "src/runner/run/run-task.ts")).toBeNull();
    expect(layerViolation("src/runner/run/run-task.ts", "src/core/events/loopgate-event.ts")).toBeNull();
    expect(layerViolation("src/selftest/check.ts", "src/runner/run/run-task.ts")).toBeNull();
    expect(layerViolation("src/core/events/loopgate-event.ts", "src/core/events/run-events.ts")).toBeNull();
  });

  it("up the list is refused, naming both files and both levels", () => {
    const v = layerViolation("src/core/task/task.ts", "src/runner/task-source/load-task.ts");
    expect(v?.kind).toBe("upward");
    expect(v?.message).toContain("src/core/task/task.ts → src/runner/task-source/load-task.ts");
    expect(v?.message).toMatch(/core\/ \(level 0\) imports runner\/ \(level 5\)/);
    expect(layerViolation("src/selftest/documentation.ts", "src/cli/flags/help.ts")?.kind).toBe("upward");
    expect(
      layerViolation("src/store/sqlite/sqlite-event-store.ts", "src/workspace/blob-store.ts")?.kind,
    ).toBe("upward");
  });

  it("two folders on one level may not import each other", () => {
    expect(layerViolation("src/builders/builder.ts", "src/agent/models/model.ts")?.kind).toBe("sideways");
    expect(layerViolation("src/gates/gate.ts", "src/judge/judge.ts")?.kind).toBe("sideways");
  });

  it("a folder with no level is reported, not let through", () => {
    expect(layerViolation("src/fixtures/x.ts", "src/core/task/task.ts")?.kind).toBe("unknown_folder");
  });
});

describe("cycles", () => {
  it("finds a two-file cycle, a longer one and a self-import, and nothing in a DAG", () => {
    expect(
      findCycles(graph({ "src/core/a.ts": ["src/core/b.ts"], "src/core/b.ts": ["src/core/a.ts"] })),
    ).toEqual([["src/core/a.ts", "src/core/b.ts", "src/core/a.ts"]]);
    expect(
      findCycles(
        graph({
          "src/core/a.ts": ["src/core/b.ts"],
          "src/core/b.ts": ["src/core/c.ts"],
          "src/core/c.ts": ["src/core/a.ts", "src/core/d.ts"],
        }),
      ),
    ).toEqual([["src/core/a.ts", "src/core/b.ts", "src/core/c.ts", "src/core/a.ts"]]);
    expect(findCycles(graph({ "src/core/a.ts": ["src/core/a.ts"] }))).toEqual([
      ["src/core/a.ts", "src/core/a.ts"],
    ]);
    expect(
      findCycles(
        graph({
          "src/core/a.ts": ["src/core/b.ts", "src/core/c.ts"],
          "src/core/b.ts": ["src/core/c.ts"],
        }),
      ),
    ).toEqual([]);
  });

  it("a cycle fails the check", () => {
    const g = graph({ "src/cli/a.ts": ["src/cli/b.ts"], "src/cli/b.ts": ["src/cli/a.ts"] });
    const v = checkImports(g);
    expect(v.map((x) => x.kind)).toEqual(["cycle"]);
    expect(v[0]?.message).toBe("import cycle: src/cli/a.ts → src/cli/b.ts → src/cli/a.ts");
  });
});

describe("the whole check", () => {
  it("a clean graph passes", () => {
    expect(
      kinds(graph({ "src/cli/main.ts": ["src/runner/run.ts"], "src/runner/run.ts": ["src/core/e.ts"] })),
    ).toEqual([]);
  });

  it("an upward import fails", () => {
    expect(kinds(graph({ "src/core/e.ts": ["src/cli/flags/help.ts"] }))).toEqual(["upward"]);
  });

  it("an allowed edge is taken out, cycles through it included; an allowance with no import is stale", () => {
    const g = graph({
      "src/agent/loop.ts": ["src/agent/repair.ts"],
      "src/agent/repair.ts": ["src/agent/loop.ts"],
      "src/builders/b.ts": ["src/agent/models/model.ts"],
    });
    expect(kinds(g).sort()).toEqual(["cycle", "sideways"]);
    const allowed = [
      { from: "src/agent/repair.ts", to: "src/agent/loop.ts", owner: "x" },
      { from: "src/builders/b.ts", to: "src/agent/models/model.ts", owner: "x" },
    ];
    expect(kinds(g, allowed)).toEqual([]);
    const stale = [...allowed, { from: "src/core/gone.ts", to: "src/core/a.ts", owner: "x" }];
    expect(kinds(g, stale)).toEqual(["stale_allowance"]);
  });
});

describe("the store's door", () => {
  it("cli/ may import store/ only through open-store.ts and the EventStore interface", () => {
    expect(storeDoorViolation("src/cli/output/context.ts", "src/store/open-store.ts")).toBeNull();
    expect(storeDoorViolation("src/cli/commands/goal/goal.ts", "src/store/kernel/event-store.ts")).toBeNull();
    const room = storeDoorViolation("src/cli/commands/gc.ts", "src/store/postgres/pg-prune.ts");
    expect(room?.kind).toBe("store_door");
    expect(room?.message).toContain("src/cli/commands/gc.ts → src/store/postgres/pg-prune.ts");
    expect(room?.message).toContain("src/store/open-store.ts");
    // A small shared file is still behind the door: the rule names files, not what they weigh.
    expect(storeDoorViolation("src/cli/commands-table.ts", "src/store/kernel/queue-policy.ts")?.kind).toBe(
      "store_door",
    );
    expect(storeDoorViolation("src/cli/x.ts", "src/store/sqlite/sqlite-event-store.ts")?.kind).toBe(
      "store_door",
    );
  });

  it("applies to cli/ only: store/ itself and the layers below cli/ reach its rooms directly", () => {
    expect(storeDoorViolation("src/store/open-store.ts", "src/store/postgres/postgres-room.ts")).toBeNull();
    expect(
      storeDoorViolation("src/runner/host/worker-host.ts", "src/store/postgres/queue-listener.ts"),
    ).toBeNull();
    expect(storeDoorViolation("src/selftest/cost.ts", "src/store/sqlite/sqlite-event-store.ts")).toBeNull();
  });

  it("fails the whole check, and an allowance takes the edge out like any other", () => {
    const g = graph({
      "src/cli/main.ts": ["src/store/open-store.ts", "src/store/postgres/run-queue.ts"],
      "src/store/open-store.ts": ["src/store/postgres/run-queue.ts"],
    });
    expect(kinds(g)).toEqual(["store_door"]);
    expect(
      kinds(g, [{ from: "src/cli/main.ts", to: "src/store/postgres/run-queue.ts", owner: "x" }]),
    ).toEqual([]);
  });
});

describe("reading imports", () => {
  it("sees static, type-only, dynamic imports and re-exports; ignores packages and node: modules", () => {
    const text = [
      'import { z } from "zod";',
      'import { readFileSync } from "node:fs";',
      'import { a } from "./a.js";',
      'import type { B } from "../core/b.js";',
      'export { c } from "./c.js";',
      'export * from "./d.js";',
      'const e = await import("./e.js");',
      "// import { no } from './comment.js';",
    ].join("\n");
    expect(importSpecifiers(text).sort()).toEqual(["../core/b.js", "./a.js", "./c.js", "./d.js", "./e.js"]);
  });
});
