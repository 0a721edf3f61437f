import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { readOnlyHint } from "../../../src/gates/tamper/js-frameworks.js";
import { findBwrap } from "../../../src/sandbox/bubblewrap.js";
import { repoModules, runJs } from "./js-run.js";

const ready = findBwrap() !== null && existsSync(repoModules);

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "lg-jsargv-"));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

const esm = {
  "package.json": '{ "type": "module" }\n',
  "src/add.js": "export const add = (a, b) => a + b;\n",
};
const cjs = { "package.json": '{ "name": "calc" }\n', "src/add.js": "exports.add = (a, b) => a + b;\n" };

const vitestFile = `import { describe, expect, test } from "vitest";
import { add } from "../src/add.js";

describe("add", () => {
  test("adds small numbers", () => expect(add(2, 2)).toBe(4));
  test("adds negatives", () => expect(add(-1, -2)).toBe(-3));
});
`;
const jestFile = (names: string[]) =>
  `const { add } = require("../src/add.js");\n\ndescribe("add", () => {\n${names
    .map((n) => `  test(${JSON.stringify(n)}, () => expect(add(2, 2)).toBe(4));\n`)
    .join("")}});\n`;

describe.skipIf(!ready)("JavaScript runners' argument forms, run for real in a read-only sandbox", () => {
  test("vitest with a config file in the read-only tree loads it without writing beside it", async () => {
    const files = {
      ...esm,
      "vitest.config.ts":
        'import { defineConfig } from "vitest/config";\n\nexport default defineConfig({ test: { include: ["test/**/*.test.js"] } });\n',
      "test/add.test.js": vitestFile,
    };
    const r = await runJs(root, files, ["node", "node_modules/vitest/vitest.mjs", "run"], { canary: false });
    expect(r.plan.argv).toContain("--configLoader=runner");
    expect(r.passed.sort(), r.output).toEqual([
      "test/add.test.js::add::adds negatives",
      "test/add.test.js::add::adds small numbers",
    ]);
    // The same run with Vite's default loader writes a bundled config beside it, and fails: the hint says why.
    const bundled = await runJs(
      root,
      files,
      ["node", "node_modules/vitest/vitest.mjs", "run", "--configLoader=bundle"],
      {
        canary: false,
      },
    );
    expect(bundled.passed).toEqual([]);
    expect(bundled.output).toContain("EROFS");
    expect(readOnlyHint(bundled.output)).toContain("writable: true");
  });

  test("vitest run naming a file, with the canary: the canary file is named too, and its tests fail", async () => {
    const files = { ...esm, "test/add.test.js": vitestFile, "test/other.test.js": vitestFile };
    const r = await runJs(root, files, ["npx", "--no-install", "vitest", "run", "test/add.test.js"], {
      canary: true,
    });
    expect(r.passed.sort(), r.output).toEqual([
      "test/add.test.js::add::adds negatives",
      "test/add.test.js::add::adds small numbers",
    ]);
    const failed = (r.report?.tests ?? []).filter((t) => t.outcome === "failed").map((t) => t.name);
    expect(failed.sort()).toEqual([...(r.plan.canary?.tests ?? [])].sort());
  });

  test("jest naming a file and a name pattern, without a canary: only the selected test passes", async () => {
    const files = {
      ...cjs,
      "heldout/x.test.js": jestFile(["parses dates", "formats dates"]),
      "test/y.test.js": jestFile(["parses other"]),
    };
    const r = await runJs(root, files, ["./node_modules/.bin/jest", "heldout/x.test.js", "-t", "parses"], {
      canary: false,
    });
    expect(r.passed, r.output).toEqual(["heldout/x.test.js::add::parses dates"]);
    expect(r.report?.tests.find((t) => t.name === "formats dates")?.outcome).toBe("skipped");
  });

  test("jest with an anchored name pattern selects every name a renamed test is emitted under", async () => {
    const emitted = ["parses dates edge 12", "parses dates limits 40"];
    const files = { ...cjs, "test/x.test.js": jestFile([...emitted, "formats dates"]) };
    const renamed = new Map([
      ["test/x.test.js::add::parses dates", emitted.map((n) => `test/x.test.js::add::${n}`)],
    ]);
    const argv = ["node", "node_modules/jest/bin/jest.js", "-t", "^add parses dates$"];
    const r = await runJs(root, files, argv, { canary: false, renamed });
    expect(r.passed.sort(), r.output).toEqual(emitted.map((n) => `test/x.test.js::add::${n}`).sort());
  });

  test("node --test with an anchored name pattern selects a renamed test's emitted names", async () => {
    const file = [
      'import { test } from "node:test";',
      'test("adds zero edge 7", () => {});',
      'test("adds zero basic 9", () => {});',
      'test("adds one", () => {});',
      "",
    ].join("\n");
    const renamed = new Map([
      [
        "test/a.test.mjs::adds zero",
        ["test/a.test.mjs::adds zero edge 7", "test/a.test.mjs::adds zero basic 9"],
      ],
    ]);
    const argv = ["node", "--test-name-pattern=^adds zero$", "--test", "test/"];
    const r = await runJs(root, { "test/a.test.mjs": file }, argv, { canary: false, renamed });
    expect(r.passed.sort(), r.output).toEqual([
      "test/a.test.mjs::adds zero basic 9",
      "test/a.test.mjs::adds zero edge 7",
    ]);
  });

  test("mocha through node_modules/.bin in parallel mode, with the canary given as a spec file", async () => {
    const spec = `const assert = require("node:assert");\nconst { add } = require("../src/add.js");\n\ndescribe("add", () => {\n  it("adds", () => assert.strictEqual(add(1, 1), 2));\n});\n`;
    const files = {
      ...cjs,
      "test/a.spec.js": spec,
      "test/b.spec.js": spec.replace('"adds"', '"adds again"'),
    };
    const r = await runJs(root, files, ["node_modules/.bin/mocha", "--parallel", "test/*.spec.js"], {
      canary: true,
    });
    expect(r.plan.argv.some((a) => a.startsWith("--file"))).toBe(false);
    expect(r.passed.sort(), r.output).toEqual([
      "test/a.spec.js::add::adds",
      "test/b.spec.js::add::adds again",
    ]);
    const failed = (r.report?.tests ?? []).filter((t) => t.outcome === "failed").map((t) => t.name);
    expect(failed.sort()).toEqual([...(r.plan.canary?.tests ?? [])].sort());
  });

  test("tape through npx, on an ES-module project: the canary file is an ES module too", async () => {
    const file = `import test from "tape";\nimport { add } from "../src/add.js";\n\ntest("adds", (t) => {\n  t.equal(add(1, 1), 2);\n  t.end();\n});\n`;
    const r = await runJs(root, { ...esm, "test/a.test.js": file }, ["npx", "-y", "tape", "test/a.test.js"], {
      canary: true,
    });
    expect(r.plan.files[0]?.content).toContain('import test from "tape"');
    expect(r.passed, r.output).toEqual(["::adds"]);
    const failed = (r.report?.tests ?? []).filter((t) => t.outcome === "failed").map((t) => t.name);
    expect(failed.sort()).toEqual([...(r.plan.canary?.tests ?? [])].sort());
  });
});
