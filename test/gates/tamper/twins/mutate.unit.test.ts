import fc from "fast-check";
import { describe, expect, test } from "vitest";
import {
  booleanReplacement,
  decimalReplacements,
  integerReplacements,
  stringReplacements,
} from "../../../../src/gates/tamper/twins/mutate.js";

const sorted = (s: string) => Array.from(s).sort().join("");

describe("integers", () => {
  test("three others, each within 3 of the original, all four consecutive", () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), (n) => {
        const r = integerReplacements(n);
        expect(r).toHaveLength(3);
        expect(r).not.toContain(n);
        for (const v of r) expect(v - n <= 3n && n - v <= 3n).toBe(true);
        const all = [...r, n].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        for (const [i, v] of all.entries()) expect(v).toBe((all[0] as bigint) + BigInt(i));
      }),
    );
  });

  test("the original takes every place in the window (400 draws: missing one has odds below 1e-49)", () => {
    const places = new Set<number>();
    for (let i = 0; i < 400; i++) {
      const r = integerReplacements(10n);
      places.add(r.filter((v) => v < 10n).length);
    }
    expect([...places].sort()).toEqual([0, 1, 2, 3]);
  });
});

describe("decimals", () => {
  test("written examples", () => {
    const r = decimalReplacements("3.14") ?? [];
    expect(r).toHaveLength(3);
    for (const t of r) expect(t).toMatch(/^3\.1[1-7]$/);
    for (const t of decimalReplacements("-2.5e3") ?? []) expect(t).toMatch(/^-?[0-9]\.[0-9]e3$/);
    for (const t of decimalReplacements(".5") ?? []) expect(t).toMatch(/^-?\.[2-8]$/);
    expect(decimalReplacements("1.2.3")).toBeNull();
    expect(decimalReplacements("abc")).toBeNull();
    expect(decimalReplacements(".")).toBeNull();
  });

  test("same fraction digits and exponent, a different value within 3 of the last digit", () => {
    const decimal = fc
      .tuple(
        fc.boolean(),
        fc.nat(99999),
        fc.string({ unit: fc.constantFrom(..."0123456789"), minLength: 1, maxLength: 6 }),
      )
      .map(([neg, whole, frac]) => `${neg ? "-" : ""}${whole}.${frac}`);
    fc.assert(
      fc.property(decimal, (text) => {
        const r = decimalReplacements(text);
        if (!r) throw new Error(`no replacements for ${text}`);
        expect(r).toHaveLength(3);
        const places = (text.split(".")[1] ?? "").length;
        // Compared exactly, in units of the last digit: `-1.25` → -125n.
        const units = (t: string) => BigInt(t.replace(".", ""));
        for (const t of r) {
          expect((t.split(".")[1] ?? "").length).toBe(places);
          expect(Number(t)).not.toBe(Number(text));
          const d = units(t) - units(text);
          expect(d !== 0n && d <= 3n && d >= -3n).toBe(true);
        }
        expect(new Set(r.map(Number)).size).toBe(3);
      }),
    );
  });
});

describe("strings", () => {
  test("permutations of the same characters when there are other orders", () => {
    const notAllSame = fc
      .string({ minLength: 2, maxLength: 12 })
      .filter((s) => new Set(Array.from(s)).size > 1);
    fc.assert(
      fc.property(notAllSame, (s) => {
        const r = stringReplacements(s);
        expect(r.length).toBeGreaterThan(0);
        expect(r.length).toBeLessThanOrEqual(3);
        expect(new Set(r).size).toBe(r.length);
        for (const t of r) {
          expect(t).not.toBe(s);
          expect(sorted(t)).toBe(sorted(s));
        }
      }),
    );
  });

  test("as many as there are other orders, up to 3 (counted by hand)", () => {
    expect(stringReplacements("ab")).toEqual(["ba"]);
    expect(stringReplacements("aab").sort()).toEqual(["aba", "baa"]);
    expect(stringReplacements("aabb")).toHaveLength(3);
    expect(stringReplacements("abcd")).toHaveLength(3);
  });

  test("one character changed within its class when no other order exists", () => {
    const same = fc
      .tuple(fc.constantFrom("a", "Q", "7", "-", " ", "é"), fc.integer({ min: 1, max: 6 }))
      .map(([c, n]) => c.repeat(n));
    const classes = [/[a-z]/, /[A-Z]/, /[0-9]/];
    fc.assert(
      fc.property(same, (s) => {
        const r = stringReplacements(s);
        expect(r).toHaveLength(3);
        expect(new Set(r).size).toBe(3);
        // The same position in every replacement: the set then looks the same from each member.
        const positions = r.map((t) => Array.from(t).findIndex((c, i) => c !== Array.from(s)[i]));
        expect(new Set(positions).size).toBe(1);
        const own = s[0] as string;
        const cls = classes.find((c) => c.test(own)) ?? /[!-/:-@[-`{-~]/;
        for (const t of r) {
          expect(t.length).toBe(s.length);
          const changed = Array.from(t).filter((c, i) => c !== Array.from(s)[i]);
          expect(changed).toHaveLength(1);
          expect(changed[0]).toMatch(cls);
        }
      }),
    );
  });

  test("the empty string has no replacement of its shape", () => {
    expect(stringReplacements("")).toEqual([]);
  });
});

test("booleans flip", () => {
  expect(booleanReplacement(true)).toBe(false);
  expect(booleanReplacement(false)).toBe(true);
});
