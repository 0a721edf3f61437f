import { parseExpression } from "@babel/parser";
import { describe, expect, test } from "vitest";
import {
  quoteLike,
  replacementKind,
  replacementsFor,
} from "../../../../src/gates/tamper/twins/js-literals.js";

/** Replacements for the literal written as `text`, read as it would be inside a test. */
function of(text: string): string[] {
  return replacementsFor(parseExpression(text), text);
}

describe("replacements keep the look of the original literal", () => {
  test("quotes and escapes", () => {
    expect(quoteLike("'x'", "it's")).toBe("'it\\'s'");
    expect(quoteLike('"x"', 'say "hi"\n')).toBe('"say \\"hi\\"\\n"');
    expect(quoteLike("`x`", "a`${b}")).toBe("`a\\`\\${b}`");
    expect(quoteLike('"e\\u0301"', "\u0301e")).toBe('"\\u0301e"');
    expect(quoteLike('"é"', "\u0301e")).toBe('"\u0301e"');
    for (const r of of("'ab'")) expect(r).toBe("'ba'");
    for (const r of of("`abc`")) expect(r).toMatch(/^`[abc]{3}`$/);
  });

  test("numbers: radix, case, width, fraction, exponent, sign, bigint", () => {
    for (const r of of("0x1F")) expect(r).toMatch(/^0x(1[C-F]|2[0-2])$/);
    for (const r of of("0b0101")) {
      expect(r).toMatch(/^0b[01]{4}$/);
      expect(Math.abs(Number(r) - 5)).toBeLessThanOrEqual(3);
    }
    for (const r of of("1.50")) expect(r).toMatch(/^1\.(4[7-9]|5[0-3])$/);
    for (const r of of("2e3")) expect(r).toMatch(/^-?[0-5]e3$/);
    for (const r of of("-3")) expect(Number(r)).toBeGreaterThanOrEqual(-6);
    for (const r of of("-3")) expect(Number(r)).toBeLessThanOrEqual(0);
    for (const r of of("10n")) expect(r).toMatch(/^(7|8|9|11|12|13)n$/);
    expect(of("1_000")).toEqual([]);
    expect(of("true")).toEqual(["false"]);
    for (const t of ["0x1F", "1.50", "-3", "10n", "'ab'", "`abc`"]) {
      const r = of(t);
      expect(r.length, t).toBeGreaterThan(0);
      expect(r, t).not.toContain(t);
      for (const x of r) expect(replacementKind(x), `${t} → ${x}`).toBe(replacementKind(t));
    }
  });

  test("a replacement text is a literal alone, or nothing", () => {
    expect(replacementKind("'a'")).toBe("string");
    expect(replacementKind("-2.5")).toBe("number");
    expect(replacementKind("`a${b}`")).toBeNull();
    expect(replacementKind("1 // x")).toBeNull();
    expect(replacementKind("f()")).toBeNull();
    expect(replacementKind("1, 2")).toBeNull();
    expect(replacementKind("(")).toBeNull();
  });
});
