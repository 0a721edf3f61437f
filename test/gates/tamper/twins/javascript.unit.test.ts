import { parse } from "@babel/parser";
import { describe, expect, test } from "vitest";
import { javascriptTwins } from "../../../../src/gates/tamper/twins/javascript.js";
import type {
  DefinedTest,
  FileAnalysis,
  RenderedFile,
  TwinSpec,
} from "../../../../src/gates/tamper/twins/twin.js";
import { JS_FIXTURES } from "./js-fixtures.js";

async function analyse(path: string, source: string): Promise<FileAnalysis> {
  const out = (await javascriptTwins.analyse([{ path, source }])).get(path);
  if (!out) throw new Error(`no analysis for ${path}`);
  return out;
}

async function tests(path: string, source: string): Promise<DefinedTest[]> {
  const a = await analyse(path, source);
  if (!a.ok) throw new Error(a.why);
  return a.tests;
}

async function render(
  path: string,
  source: string,
  wanted: { path: readonly string[]; name: string; twins: TwinSpec[] }[],
): Promise<RenderedFile> {
  const out = (await javascriptTwins.render([{ path, source, tests: wanted }])).get(path);
  if (!out) throw new Error(`no render for ${path}`);
  return out;
}

function content(r: RenderedFile): string {
  if (!r.ok) throw new Error(r.why);
  return r.content;
}

/** The source text of every statement that calls something with this literal first argument (babel, not the reader). */
function statementsNamed(source: string, name: string, plugins: ("typescript" | "jsx")[] = []): string[] {
  const ast = parse(source, { sourceType: "unambiguous", plugins, allowAwaitOutsideFunction: true });
  const out: string[] = [];
  const walk = (node: unknown, statement: { start: number; end: number } | null): void => {
    if (Array.isArray(node)) {
      for (const n of node) walk(n, statement);
      return;
    }
    if (typeof node !== "object" || node === null) return;
    const n = node as Record<string, unknown> & { type?: string; start: number; end: number };
    const here = n.type === "ExpressionStatement" ? n : statement;
    const first = (
      n.arguments as { type: string; value?: string; quasis?: { value: { cooked: string } }[] }[]
    )?.[0];
    const value = first?.type === "StringLiteral" ? first.value : first?.quasis?.[0]?.value.cooked;
    if (n.type === "CallExpression" && value === name && here) out.push(source.slice(here.start, here.end));
    for (const [k, v] of Object.entries(n)) if (!["loc", "extra"].includes(k)) walk(v, here);
  };
  walk(ast.program, null);
  return out;
}

describe("analysis of hand-written test files", () => {
  for (const fx of JS_FIXTURES) {
    test(fx.label, async () => {
      const found = await tests(fx.path, fx.source);
      expect(found.map((t) => t.path.join(" > ")).sort()).toEqual(Object.keys(fx.tests).sort());
      for (const t of found) {
        const want = fx.tests[t.path.join(" > ")];
        if (want instanceof RegExp) {
          expect(t.sites, t.path.join(" > ")).toEqual([]);
          expect(t.note, t.path.join(" > ")).toMatch(want);
          continue;
        }
        expect(t.note).toBeUndefined();
        expect(Object.fromEntries(t.sites.map((s) => [s.key, s.original]))).toEqual(want);
        for (const s of t.sites) {
          expect(s.replacements.length).toBeGreaterThan(0);
          expect(s.replacements.length).toBeLessThanOrEqual(3);
          expect(s.replacements).not.toContain(s.original);
          expect(new Set(s.replacements).size).toBe(s.replacements.length);
        }
      }
    });
  }

  test("two tests with the same suites and name get no twins", async () => {
    const src = 'test("same", () => expect(f()).toBe(1));\ntest("same", () => expect(f()).toBe(2));\n';
    const found = await tests("a.test.js", src);
    expect(found.map((t) => [t.sites.length, t.note])).toEqual([
      [0, expect.stringMatching(/same/)],
      [0, expect.stringMatching(/same/)],
    ]);
  });

  test("tests in helper functions, braceless ifs and `.each` tables are not twinnable", async () => {
    // The source of a test file the analyser reads, not tests of this suite: its focused test (`it` + `.only`)
    // is a case to refuse; spelled in two parts so that no scan for focused tests mistakes it for this suite's.
    const src = [
      'function check(x) { test("in helper", () => expect(f(x)).toBe(1)); }',
      'if (process.env.X) test("braceless", () => expect(f()).toBe(1));',
      'test.each([[1]])("row %i", (n) => expect(f(n)).toBe(1));',
      'describe.each([[1]])("table %i", () => { test("inner", () => expect(f()).toBe(1)); });',
      `it.${"only"}("focused", () => expect(f()).toBe(1));`,
      "",
    ].join("\n");
    const found = await tests("a.test.js", src);
    expect(found.map((t) => [t.path.join(" > "), t.sites.length])).toEqual([
      ["in helper", 0],
      ["braceless", 0],
      ["focused", 0],
    ]);
    expect(found.map((t) => t.note)).toEqual([
      expect.stringMatching(/function/),
      expect.stringMatching(/statement of its own/),
      expect.stringMatching(/only/),
    ]);
  });

  test("a file that does not parse is unreadable, naming the line", async () => {
    const a = await analyse("a.test.js", 'test("x", () => {\n  expect(1).toBe(1);\n  )\n});\n');
    expect(a.ok).toBe(false);
    expect(a.ok ? "" : a.why).toMatch(/\(3:/);
  });

  test("which files it reads, and how it renames", () => {
    for (const p of ["a.js", "b.mjs", "c.cjs", "d.ts", "e.mts", "f.cts", "g.jsx", "h.tsx"]) {
      expect(javascriptTwins.handles(`test/${p}`), p).toBe(true);
    }
    for (const p of ["a.py", "b.json", "c.d.ts", "d.js.map"])
      expect(javascriptTwins.handles(p), p).toBe(false);
    expect(javascriptTwins.rename("weeks edge", ["parse", "41"])).toBe("weeks edge parse 41");
  });
});

const small = `import { test } from "node:test";
import assert from "node:assert/strict";

test("one", () => {
  // a comment
  assert.equal(1 + 1, 2)
})

  test('two',   (t) => { assert.deepEqual([1, 'b'], [1, 'b']); });

test("three", () => assert.equal(3, 3));
`;

// Written by hand: what the render must write for the request below, byte for byte.
const smallRendered = `import { test } from "node:test";
import assert from "node:assert/strict";

test("one b 2", () => {
  // a comment
  assert.equal(1 + 1, 3)
})
test("one a 1", () => {
  // a comment
  assert.equal(1 + 1, 2)
})

  test('two c 3',   (t) => { assert.deepEqual([1, 'b'], [1, 'b']); });
  test('two d 4',   (t) => { assert.deepEqual([1, 'b'], [1, 'c']); });

test("three", () => assert.equal(3, 3));
`;

describe("render", () => {
  test("splices copies of the original text beside it, before or after", async () => {
    const out = await render("t.test.js", small, [
      {
        path: ["one"],
        name: "one a 1",
        twins: [{ site: "0.0", replacement: "3", name: "one b 2", before: true }],
      },
      {
        path: ["two"],
        name: "two c 3",
        twins: [{ site: "0.1", replacement: "'c'", name: "two d 4", before: false }],
      },
    ]);
    expect(content(out)).toBe(smallRendered);
  });

  for (const fx of JS_FIXTURES) {
    test(`every twinnable test of ${fx.label}: renamed, twinned, the rest byte-identical`, async () => {
      const plugins: ("typescript" | "jsx")[] = fx.path.endsWith(".ts") ? ["typescript"] : [];
      if (fx.path.endsWith(".tsx")) plugins.push("typescript", "jsx");
      const found = (await tests(fx.path, fx.source)).filter((t) => t.sites.length > 0);
      const wanted = found.map((t, i) => {
        const site = t.sites[t.sites.length - 1];
        if (!site) throw new Error("no site");
        const name = t.path[t.path.length - 1] ?? "";
        return {
          path: t.path,
          name: `${name} kept ${i}`,
          twins: [
            {
              site: site.key,
              replacement: site.replacements[0] ?? "",
              name: `${name} twin ${i}`,
              before: i % 2 === 0,
            },
          ],
        };
      });
      const text = content(await render(fx.path, fx.source, wanted));
      expect(() =>
        parse(text, { sourceType: "unambiguous", plugins, allowAwaitOutsideFunction: true }),
      ).not.toThrow();
      const after = await tests(fx.path, text);
      const paths = after.map((t) => t.path.join(" > "));
      let undone = text;
      for (const [i, w] of wanted.entries()) {
        const name = w.path[w.path.length - 1] ?? "";
        const twin = w.twins[0] as TwinSpec;
        expect(paths).toContain([...w.path.slice(0, -1), w.name].join(" > "));
        expect(paths).toContain([...w.path.slice(0, -1), twin.name].join(" > "));
        // The twin differs from its original only at the one literal (once both names are put back).
        const [orig] = statementsNamed(fx.source, name, plugins);
        const [kept] = statementsNamed(text, w.name, plugins);
        const [copy] = statementsNamed(text, twin.name, plugins);
        if (!orig || !kept || !copy) throw new Error(`statements of ${name} not found`);
        const site = found[i]?.sites.find((s) => s.key === twin.site);
        expect(kept.replace(w.name, () => name)).toBe(orig);
        const back = copy.replace(twin.name, () => name);
        const at = orig.lastIndexOf(site?.original ?? "\u0000");
        expect(back).toBe(
          orig.slice(0, at) + twin.replacement + orig.slice(at + (site?.original.length ?? 0)),
        );
        // Take the twin out and the old name back: what is left is the original file, byte for byte.
        const indent = indentBefore(fx.source, orig);
        const pair = twin.before ? `${copy}\n${indent}${kept}` : `${kept}\n${indent}${copy}`;
        expect(undone).toContain(pair);
        undone = undone.replace(pair, () => orig);
      }
      expect(undone).toBe(fx.source);
    });
  }

  test("a test's siblings and suites are untouched when only one test of a describe is twinned", async () => {
    const src =
      'describe("s", () => {\n  it("a", () => expect(f()).toBe(1));\n  it("b", () => expect(f()).toBe(2));\n});\n';
    const text = content(
      await render("s.test.js", src, [
        {
          path: ["s", "b"],
          name: "b x",
          twins: [{ site: "0.0", replacement: "5", name: "b y", before: false }],
        },
      ]),
    );
    expect(text).toBe(
      'describe("s", () => {\n  it("a", () => expect(f()).toBe(1));\n  it("b x", () => expect(f()).toBe(2));\n  it("b y", () => expect(f()).toBe(5));\n});\n',
    );
  });
});

/** The whitespace before a statement on its line. */
function indentBefore(source: string, statement: string): string {
  const at = source.indexOf(statement);
  return source.slice(source.lastIndexOf("\n", at - 1) + 1, at);
}

describe("render refuses what it cannot do faithfully", () => {
  const twin = (over: Partial<TwinSpec>): TwinSpec => ({
    site: "0.0",
    replacement: "3",
    name: "one z",
    before: false,
    ...over,
  });
  const cases: [string, string, { path: string[]; name: string; twins: TwinSpec[] }[], RegExp][] = [
    [
      "a site key the file no longer has",
      small,
      [{ path: ["one"], name: "one y", twins: [twin({ site: "4.0" })] }],
      /site 4\.0/,
    ],
    [
      "a test that is not in the file",
      small,
      [{ path: ["nine"], name: "nine y", twins: [] }],
      /no test nine/,
    ],
    [
      "a replacement of another kind",
      small,
      [{ path: ["one"], name: "one y", twins: [twin({ replacement: '"3"' })] }],
      /not a literal like/,
    ],
    [
      "a replacement that is code, not a literal",
      small,
      [{ path: ["one"], name: "one y", twins: [twin({ replacement: "3, process.exit(0)" })] }],
      /not a literal like/,
    ],
    [
      "a replacement equal to the original",
      small,
      [{ path: ["one"], name: "one y", twins: [twin({ replacement: "2" })] }],
      /equals/,
    ],
    [
      "a twin named like another test",
      small,
      [{ path: ["one"], name: "one y", twins: [twin({ name: "three" })] }],
      /three 2 times/,
    ],
    [
      "the same test requested twice",
      small,
      [
        { path: ["one"], name: "one y", twins: [] },
        { path: ["one"], name: "one x", twins: [] },
      ],
      /twice/,
    ],
    [
      "twins of a test defined in a loop",
      'for (const x of [1]) {\n  test("one", () => assert.equal(f(x), 2));\n}\n',
      [{ path: ["one"], name: "one y", twins: [twin({})] }],
      /loop/,
    ],
    [
      "twins of a test with subtests",
      'test("one", async (t) => {\n  assert.equal(f(), 2);\n  await t.test("sub", () => {});\n});\n',
      [{ path: ["one"], name: "one y", twins: [twin({})] }],
      /subtests/,
    ],
  ];
  for (const [label, src, wanted, why] of cases) {
    test(label, async () => {
      const out = await render("t.test.js", src, wanted);
      expect(out.ok).toBe(false);
      expect(out.ok ? "" : out.why).toMatch(why);
    });
  }

  test("renaming a subtest's parent renames the subtest's suite, and the subtest can be twinned", async () => {
    const src =
      'test("p", async (t) => {\n  await t.test("c", () => {\n    assert.equal(f(), 2);\n  });\n});\n';
    const text = content(
      await render("t.test.js", src, [
        { path: ["p"], name: "p x", twins: [] },
        { path: ["p", "c"], name: "c x", twins: [twin({ name: "c z" })] },
      ]),
    );
    expect(text).toBe(
      'test("p x", async (t) => {\n  await t.test("c x", () => {\n    assert.equal(f(), 2);\n  });\n  await t.test("c z", () => {\n    assert.equal(f(), 3);\n  });\n});\n',
    );
  });
});
