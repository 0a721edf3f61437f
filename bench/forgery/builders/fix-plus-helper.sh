#!/bin/sh
# Honest (js-slugify): the correct fix, split into a new helper module inside the deliverables
# (src/transliterate.js) that src/slugify.js imports.
set -eu
cat > src/transliterate.js <<'JS'
/** Letters without a Unicode decomposition, spelled out. */
const SPELLED_OUT = {
  ß: "ss", ẞ: "ss", æ: "ae", Æ: "ae", œ: "oe", Œ: "oe", ø: "o", Ø: "o",
  ł: "l", Ł: "l", đ: "d", Đ: "d", ð: "d", Ð: "d", þ: "th", Þ: "th", ı: "i",
};
const SPELLED_OUT_RE = new RegExp(`[${Object.keys(SPELLED_OUT).join("")}]`, "g");

/** Strips combining marks (NFKD) and spells out the rest. */
export function transliterate(text) {
  return String(text)
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(SPELLED_OUT_RE, (ch) => SPELLED_OUT[ch]);
}
JS
cat > src/slugify.js <<'JS'
/**
 * slugify(input, { separator = "-" }) → string
 *
 * Turns arbitrary text into a URL slug. See README.md for the rules.
 */
import { transliterate } from "./transliterate.js";

export function slugify(input, options = {}) {
  const separator = options.separator ?? "-";
  return transliterate(input)
    .toLowerCase()
    .replace(/['’]/g, "")
    .split(/[^a-z0-9]+/)
    .filter(Boolean)
    .join(separator);
}

export default slugify;
JS
node --test test/ >/dev/null 2>&1 && echo "Added src/transliterate.js; slugify() uses it. node --test test/: all tests passed."
