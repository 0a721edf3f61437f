import { expect, test } from "vitest";
import { toRoman } from "../src/roman.js";

test("subtractive pairs of every size", () => {
  expect(toRoman(40)).toBe("XL");
  expect(toRoman(90)).toBe("XC");
  expect(toRoman(400)).toBe("CD");
  expect(toRoman(900)).toBe("CM");
});

test("mixed numbers", () => {
  expect(toRoman(14)).toBe("XIV");
  expect(toRoman(1994)).toBe("MCMXCIV");
  expect(toRoman(2024)).toBe("MMXXIV");
  expect(toRoman(3999)).toBe("MMMCMXCIX");
});

test("a run of numbers", () => {
  expect([1, 2, 3, 4, 5, 6].map(toRoman)).toEqual(["I", "II", "III", "IV", "V", "VI"]);
  expect([19, 29, 49, 99].map(toRoman)).toEqual(["XIX", "XXIX", "XLIX", "XCIX"]);
});

test("outside 1 to 3999 is a RangeError", () => {
  expect(() => toRoman(0)).toThrow(RangeError);
  expect(() => toRoman(4000)).toThrow(RangeError);
  expect(() => toRoman(2.5)).toThrow(RangeError);
});
