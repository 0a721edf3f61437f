/**
 * toRoman(n) → string
 *
 * Writes a whole number from 1 to 3999 in Roman numerals: I V X L C D M, largest first, with the
 * subtractive pairs IV IX XL XC CD CM (4 is "IV", never "IIII"). Anything else is a RangeError.
 */
const VALUES = [
  [1000, "M"],
  [500, "D"],
  [100, "C"],
  [50, "L"],
  [10, "X"],
  [5, "V"],
  [1, "I"],
];

function toRoman(n) {
  let rest = Math.floor(n);
  let out = "";
  for (const [value, letters] of VALUES) {
    while (rest >= value) {
      out += letters;
      rest -= value;
    }
  }
  return out;
}

module.exports = { toRoman };
