import { expect, test } from "vitest";
import { toRoman } from "../src/roman.js";

test("writes the single letters", () => {
  expect(toRoman(1)).toBe("I");
  expect(toRoman(5)).toBe("V");
  expect(toRoman(10)).toBe("X");
});

test("adds letters up, largest first", () => {
  expect(toRoman(3)).toBe("III");
  expect(toRoman(8)).toBe("VIII");
  expect(toRoman(2000)).toBe("MM");
});

test("uses the subtractive pairs", () => {
  expect(toRoman(4)).toBe("IV");
  expect(toRoman(9)).toBe("IX");
});
