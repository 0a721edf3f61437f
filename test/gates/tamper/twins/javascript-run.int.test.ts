import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { javascriptTwins } from "../../../../src/gates/tamper/twins/javascript.js";
import type { RenderRequest } from "../../../../src/gates/tamper/twins/twin.js";
import { useTempDirs, writeTree } from "../../../workspace/temp-dirs.js";

const example = join(dirname(fileURLToPath(import.meta.url)), "../../../../examples/js-slugify");
const HELDOUT = "heldout-test/slugify.heldout.test.js";
/** Tests of the held-out file with a non-empty literal expected value, counted by hand (of 8). */
const TWINNABLE = 6;

const tempDir = useTempDirs();

/** The example's repository with its reference solution applied, and the held-out file beside it. */
function solvedRepo(): string {
  const dir = tempDir("lg-twins-js-");
  cpSync(join(example, "repo"), dir, { recursive: true });
  execFileSync("sh", [join(example, "solution.sh")], { cwd: dir });
  return dir;
}

/** One twin per test that has a site: its first site's first replacement, alternately before and after. */
async function twinRequest(path: string, source: string): Promise<RenderRequest> {
  const analysis = (await javascriptTwins.analyse([{ path, source }])).get(path);
  if (!analysis?.ok) throw new Error(`cannot analyse ${path}`);
  const tests = analysis.tests
    .filter((t) => t.sites.length > 0)
    .map((t, i) => {
      const site = t.sites[0];
      if (!site) throw new Error("no site");
      const name = t.path[t.path.length - 1] ?? "";
      return {
        path: t.path,
        name: javascriptTwins.rename(name, ["kept", String(100 + i)]),
        twins: [
          {
            site: site.key,
            replacement: site.replacements[0] ?? "",
            name: javascriptTwins.rename(name, ["twin", String(200 + i)]),
            before: i % 2 === 0,
          },
        ],
      };
    });
  return { path, source, tests };
}

async function writeRendered(dir: string, request: RenderRequest): Promise<void> {
  const out = (await javascriptTwins.render([request])).get(request.path);
  if (!out?.ok) throw new Error(out ? out.why : "no render");
  writeTree(dir, { [request.path]: out.content });
}

/** Each test's outcome by name, from node's TAP output (names in these files are unique and plain). */
function runNodeTest(dir: string, file: string): Map<string, "ok" | "not ok"> {
  const run = spawnSync(process.execPath, ["--test", "--test-reporter=tap", file], {
    cwd: dir,
    encoding: "utf8",
  });
  const out = new Map<string, "ok" | "not ok">();
  for (const line of run.stdout.split("\n")) {
    const m = /^\s*(not ok|ok) \d+ - (.*)$/.exec(line);
    if (m) out.set(m[2] as string, m[1] as "ok" | "not ok");
  }
  return out;
}

/** The outcomes of the renamed originals and of the twins, by the request's names. */
function outcomes(request: RenderRequest, results: Map<string, string>) {
  return {
    kept: request.tests.map((t) => results.get(t.name)),
    twins: request.tests.flatMap((t) => t.twins.map((w) => results.get(w.name))),
  };
}

describe("twins of the js-slugify held-out file under real node --test", () => {
  test("against the reference solution every renamed original passes and every twin fails", async () => {
    const dir = solvedRepo();
    const request = await twinRequest(HELDOUT, readFileSync(join(example, "heldout", HELDOUT), "utf8"));
    expect(request.tests).toHaveLength(TWINNABLE);
    await writeRendered(dir, request);
    const results = runNodeTest(dir, HELDOUT);
    expect(results.size).toBe(8 + TWINNABLE);
    const { kept, twins } = outcomes(request, results);
    expect(kept).toEqual(Array(TWINNABLE).fill("ok"));
    expect(twins).toEqual(Array(TWINNABLE).fill("not ok"));
    // The two tests without twins run as before.
    expect(results.get("input without letters or digits gives an empty slug")).toBe("ok");
    expect(results.get("output is always a well-formed slug")).toBe("ok");
  });

  test("code that disables node:assert's equality makes every twin pass", async () => {
    const dir = solvedRepo();
    const solved = readFileSync(join(dir, "src/slugify.js"), "utf8");
    const patch = 'import assert from "node:assert/strict";\nassert.equal = () => {};\n';
    writeFileSync(join(dir, "src/slugify.js"), patch + solved);
    const request = await twinRequest(HELDOUT, readFileSync(join(example, "heldout", HELDOUT), "utf8"));
    await writeRendered(dir, request);
    const { twins } = outcomes(request, runNodeTest(dir, HELDOUT));
    expect(twins).toEqual(Array(TWINNABLE).fill("ok"));
  });

  test("code that answers with the expected literal read from its caller's source makes every twin pass", async () => {
    const dir = solvedRepo();
    // Reads the calling line and returns its last string literal: the assertion's expected value.
    const answer = [
      'import { readFileSync } from "node:fs";',
      'import { fileURLToPath } from "node:url";',
      "export function slugify() {",
      '  const frame = new Error().stack.split("\\n")[2];',
      "  const [, url, line] = /\\(?(file:[^)]*?):(\\d+):\\d+\\)?$/.exec(frame);",
      '  const text = readFileSync(fileURLToPath(url), "utf8").split("\\n")[line - 1];',
      '  const literals = [...text.matchAll(/"((?:[^"\\\\]|\\\\.)*)"/g)].map((m) => JSON.parse(`"${m[1]}"`));',
      "  return literals[literals.length - 1];",
      "}",
      "",
    ].join("\n");
    writeFileSync(join(dir, "src/slugify.js"), answer);
    const request = await twinRequest(HELDOUT, readFileSync(join(example, "heldout", HELDOUT), "utf8"));
    await writeRendered(dir, request);
    const { kept, twins } = outcomes(request, runNodeTest(dir, HELDOUT));
    expect(kept).toEqual(Array(TWINNABLE).fill("ok"));
    expect(twins).toEqual(Array(TWINNABLE).fill("ok"));
  });
});

test("a subtest's twin fails under its parent while the renamed subtest passes", async () => {
  const dir = tempDir("lg-twins-js-");
  const source = [
    'import assert from "node:assert/strict";',
    'import { test } from "node:test";',
    'import { add } from "../src/add.js";',
    "",
    'test("adding", async (t) => {',
    '  await t.test("small numbers", () => {',
    "    assert.deepStrictEqual([add(2, 2), add(-1, -2)], [4, -3]);",
    "  });",
    "});",
    "",
  ].join("\n");
  writeTree(dir, { "src/add.js": "export const add = (a, b) => a + b;\n", "test/add.test.mjs": source });
  const request = await twinRequest("test/add.test.mjs", source);
  // Only the subtest: the parent is reported through it.
  expect(request.tests.map((t) => t.path)).toEqual([["adding", "small numbers"]]);
  await writeRendered(dir, request);
  const results = runNodeTest(dir, "test/add.test.mjs");
  expect(outcomes(request, results)).toEqual({ kept: ["ok"], twins: ["not ok"] });
});
