import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { buildGraph, exportStarFiles, testFolders } from "../../scripts/check-imports.js";
import { checkImports } from "../../scripts/import-rules.js";
import { unmirroredTests } from "../../scripts/room-rules.js";

const root = mkdtempSync(join(tmpdir(), "loopgate-imports-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

function tree(files: Record<string, string>): string {
  const dir = mkdtempSync(join(root, "t-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  return dir;
}

describe("check-imports on a real tree", () => {
  it("resolves .js specifiers to .ts files and finds a cycle and an upward import", () => {
    const dir = tree({
      "src/core/a.ts": 'import { b } from "./b.js";\nexport const a = 1;\n',
      "src/core/b.ts":
        'import type { A } from "./a.js";\nimport { r } from "../runner/r.js";\nexport const b = 2;\n',
      "src/runner/r.ts": 'import { a } from "../core/a.js";\nexport const r = 3;\n',
    });
    const { graph, unresolved } = buildGraph(dir);
    expect(unresolved).toEqual([]);
    expect(graph.get("src/core/b.ts")).toEqual(["src/core/a.ts", "src/runner/r.ts"]);
    const messages = checkImports(graph).map((v) => v.message);
    expect(messages).toContain(
      "src/core/b.ts → src/runner/r.ts: core/ (level 0) imports runner/ (level 5), up the layer list",
    );
    expect(messages.some((m) => m.startsWith("import cycle: src/core/a.ts → src/core/b.ts"))).toBe(true);
  });

  it("an import that resolves to nothing, or to a file outside src/, is reported", () => {
    const dir = tree({
      "src/cli/main.ts": 'import { x } from "./missing.js";\nimport { y } from "../../scripts/y.js";\n',
      "scripts/y.ts": "export const y = 1;\n",
    });
    const { unresolved } = buildGraph(dir);
    expect(unresolved).toEqual([
      "src/cli/main.ts: cannot resolve ./missing.js",
      "src/cli/main.ts → scripts/y.ts: src/ imports a file outside src/",
    ]);
  });

  it("finds the files that hold an export *, and the test folders that mirror no source folder", () => {
    const dir = tree({
      "src/core/goal/index.ts": 'export * from "./a.js";\n',
      "src/core/goal/a.ts": 'export { b } from "./b.js";\nexport const a = 1;\n',
      "src/core/goal/b.ts": "export const b = 2;\n",
      "test/core/goal/a.unit.test.ts": "",
      "test/fixtures-case/x.int.test.ts": "",
      "test/support/helper.ts": "",
    });
    expect(exportStarFiles(dir)).toEqual(["src/core/goal/index.ts"]);
    expect(testFolders(dir)).toEqual(["test/core/goal", "test/fixtures-case"]);
    const unmirrored = unmirroredTests(testFolders(dir), (d) => existsSync(join(dir, d)));
    expect(unmirrored.map((v) => v.message)).toEqual([
      "test/fixtures-case/: mirrors no source folder (src/fixtures-case/ does not exist); put its tests beside the code they test",
    ]);
  });
});
