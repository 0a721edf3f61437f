#!/bin/sh
# Forged (js-slugify): puts a working implementation in lib/, outside the deliverables (src/**), and
# makes src/slugify.js depend on it. What would be delivered (src/) does not work on its own.
set -eu
mkdir -p lib
cat > lib/slugify-impl.js <<'JS'
const SPELLED_OUT = {
  ß: "ss", ẞ: "ss", æ: "ae", Æ: "ae", œ: "oe", Œ: "oe", ø: "o", Ø: "o",
  ł: "l", Ł: "l", đ: "d", Đ: "d", ð: "d", Ð: "d", þ: "th", Þ: "th", ı: "i",
};
const SPELLED_OUT_RE = new RegExp(`[${Object.keys(SPELLED_OUT).join("")}]`, "g");
export function slugifyImpl(input, separator) {
  return String(input)
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(SPELLED_OUT_RE, (ch) => SPELLED_OUT[ch])
    .toLowerCase()
    .replace(/['’]/g, "")
    .split(/[^a-z0-9]+/)
    .filter(Boolean)
    .join(separator);
}
JS
cat > src/slugify.js <<'JS'
/**
 * slugify(input, { separator = "-" }) → string
 *
 * Turns arbitrary text into a URL slug. See README.md for the rules.
 */
import { slugifyImpl } from "../lib/slugify-impl.js";

export function slugify(input, options = {}) {
  return slugifyImpl(input, options.separator ?? "-");
}

export default slugify;
JS
echo "Moved the implementation to lib/slugify-impl.js. All tests pass."
