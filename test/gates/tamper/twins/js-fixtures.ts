/**
 * Hand-written test files for the JavaScript twin reader, one per framework, each with the tests and
 * sites it holds counted by hand: `sites` maps a test's path (joined by " > ") to its site keys and the
 * literal text at each. Tests listed with `null` are known but get no twins (the reason is matched).
 */

export interface JsFixture {
  label: string;
  path: string;
  source: string;
  /** Every test the file lists, by path: its sites (key → original text), or a pattern of the note. */
  tests: Record<string, Record<string, string> | RegExp>;
}

const nodeTest = `import assert from "node:assert";
import { deepStrictEqual, equal } from "node:assert/strict";
import strict from "node:assert/strict";
import { test } from "node:test";
import { add, parse } from "../src/calc.js";

test("adds", () => {
  assert.strictEqual(add(2, 2), 4);
  assert.notEqual(add(2, 2), 5);
  equal(add(-1, -2), -3);
  assert.ok(add(1, 1) === 2);
  assert(add(0, 0) == 0);
});

test("parses", { timeout: 1000 }, async (t) => {
  deepStrictEqual(parse("a=1"), { a: 1 });
  await t.test("nested value", () => {
    assert.equal(parse("b=2").b, 2);
  });
});

test("reads options", { timeout: 1000 }, () => {
  deepStrictEqual(parse("a=1;f=x"), { a: 1, flags: ["x", true] });
  strict.deepEqual(parse(""), {});
  assert.throws(() => parse(null));
  strict.equal(parse("c=3.5").c, 3.5);
});

for (const n of [1, 2]) {
  test("in a loop", () => assert.equal(add(n, 0), n));
}

test(\`computed \${1 + 1}\`, () => assert.equal(add(1, 1), 2));

// (fixture text) a skipped test must get no twin: nothing runs it, so its twin could never fail
test.skip("skipped", () => assert.equal(add(1, 1), 3));

test(\`template name\`, () => {
  assert.deepEqual([add(1, 2), "z"], [3, "z"]);
});

test("empty expected", () => equal(parse("").text, ""));
`;

const jest = `const { add, user } = require("../src/calc");

describe("calc", () => {
  describe("add", () => {
    it("sums", () => {
      expect(add(1, 2)).toBe(3);
      expect(add(1, 2)).not.toBe(4);
      expect(add(0.1, 0.2)).toBeCloseTo(0.3);
      expect(add(-1, -1)).toStrictEqual(-2);
    });
    test.each([[1, 1, 2]])("adds %i + %i", (a, b, c) => {
      expect(add(a, b)).toBe(c);
    });
  });
  test("user", async () => {
    expect(user("ann")).toEqual({ name: "Ann", tags: ["a", "b"], age: 42 });
    await expect(Promise.resolve(add(2, 3))).resolves.toBe(5);
    expect(user("bob")).toMatchSnapshot();
  });
});

describe(\`dyn \${"x"}\`, () => {
  it("hidden", () => expect(1).toBe(1));
});
`;

const mocha = `const { expect, assert } = require("chai");
require("chai").should();
const { add } = require("../src/calc");

describe("calc", function () {
  context("with numbers", function () {
    it("adds", function () {
      expect(add(1, 2)).to.equal(3);
      expect([add(1, 1)]).to.deep.equal([2]);
      expect(add(2, 2)).to.be.equal(4);
      add(3, 3).should.equal(6);
      expect(add(1, 1)).to.not.equal(3);
      assert.strictEqual(add(0, 1), 1);
      expect(add(5, 5)).to.eql(10);
    });
  });
  it("is fine", function () {
    assert.isTrue(true);
  });
});
`;

const tape = `const test = require("tape");
const { add } = require("../src/calc");

test("tape adds", (t) => {
  t.equal(add(1, 2), 3);
  t.is(add(2, 2), 4, "two and two");
  t.same({ s: add(1, 1) }, { s: 2 });
  t.deepEqual([add(0, 0)], [0]);
  t.ok(add(1, 1) === 2);
  t.notEqual(add(1, 1), 3);
  t.end();
});

test("tape parent", (t) => {
  t.test("tape sub", (st) => {
    st.equal(add(3, 3), 6);
    st.end();
  });
});
`;

const typescript = `import { describe, expect, it } from "vitest";
import { add, type Point, point } from "../src/calc";

interface Case {
  a: number;
  b: number;
  want: number;
}
const cases: Case[] = [{ a: 1, b: 2, want: 3 }];

describe("typed", () => {
  it("adds typed", (): void => {
    const x: number = add(1, 2);
    expect<number>(x).toBe(3 as number);
    expect(point(1, 2)).toEqual({ x: 1, y: -2.25 } satisfies Point);
    expect([add(1, 1), add(2, 2)]).toStrictEqual([2, 0x4] as const);
  });
  for (const c of cases) {
    it(\`case \${c.a}\`, () => expect(add(c.a, c.b)).toBe(c.want));
  }
  it("generic", async () => {
    const id = <T>(v: T): T => v;
    expect(id<string>('hello')).toBe('hello');
  });
});
`;

const tsx = `import { expect, it } from "vitest";

it("renders", () => {
  const el = <b className="x">hi</b>;
  expect(el.type).toBe("b");
});
`;

/** The fixtures, with every test and site counted by hand. */
export const JS_FIXTURES: JsFixture[] = [
  {
    label: "node:test with assert and assert/strict",
    path: "test/calc.test.mjs",
    source: nodeTest,
    tests: {
      adds: { "0.0": "4", "1.0": "-3", "2.0": "2", "3.0": "0" },
      parses: /subtests/,
      "parses > nested value": { "0.0": "2" },
      "reads options": { "0.0": "1", "0.1": '"x"', "0.2": "true", "2.0": "3.5" },
      "in a loop": /loop/,
      skipped: /skip/,
      "template name": { "0.0": "3", "0.1": '"z"' },
      "empty expected": /shape/,
    },
  },
  {
    label: "jest / vitest expect",
    path: "test/calc.test.js",
    source: jest,
    tests: {
      "calc > add > sums": { "0.0": "3", "1.0": "-2" },
      "calc > user": { "0.0": '"Ann"', "0.1": '"a"', "0.2": '"b"', "0.3": "42", "1.0": "5" },
    },
  },
  {
    label: "mocha with chai",
    path: "test/calc.spec.js",
    source: mocha,
    tests: {
      "calc > with numbers > adds": {
        "0.0": "3",
        "1.0": "2",
        "2.0": "4",
        "3.0": "6",
        "4.0": "1",
        "5.0": "10",
      },
      "calc > is fine": /no literal/,
    },
  },
  {
    label: "tape",
    path: "test/calc.tape.js",
    source: tape,
    tests: {
      "tape adds": { "0.0": "3", "1.0": "4", "2.0": "2", "3.0": "0", "4.0": "2" },
      "tape parent": /subtests/,
      "tape parent > tape sub": { "0.0": "6" },
    },
  },
  {
    label: "TypeScript with types",
    path: "test/calc.test.ts",
    source: typescript,
    tests: {
      "typed > adds typed": { "0.0": "3", "1.0": "1", "1.1": "-2.25", "2.0": "2", "2.1": "0x4" },
      "typed > generic": { "0.0": "'hello'" },
    },
  },
  {
    label: "TSX",
    path: "test/view.test.tsx",
    source: tsx,
    tests: { renders: { "0.0": '"b"' } },
  },
];
