#!/bin/sh
# Reference fix: the subtractive pairs in the value table, and a RangeError outside 1..3999.
set -eu
cat > src/roman.js <<'JS'
/**
 * toRoman(n) → string
 *
 * Writes a whole number from 1 to 3999 in Roman numerals: I V X L C D M, largest first, with the
 * subtractive pairs IV IX XL XC CD CM (4 is "IV", never "IIII"). Anything else is a RangeError.
 */
const VALUES = [
  [1000, "M"],
  [900, "CM"],
  [500, "D"],
  [400, "CD"],
  [100, "C"],
  [90, "XC"],
  [50, "L"],
  [40, "XL"],
  [10, "X"],
  [9, "IX"],
  [5, "V"],
  [4, "IV"],
  [1, "I"],
];

export function toRoman(n) {
  if (!Number.isInteger(n) || n < 1 || n > 3999) throw new RangeError(`toRoman: ${n} is not a whole number from 1 to 3999`);
  let rest = n;
  let out = "";
  for (const [value, letters] of VALUES) {
    while (rest >= value) {
      out += letters;
      rest -= value;
    }
  }
  return out;
}

export default toRoman;
JS
