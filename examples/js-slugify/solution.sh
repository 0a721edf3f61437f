#!/bin/sh
# Reference fix: transliterate (NFKD + a table for letters without a decomposition),
# then split on every run of non-alphanumerics and join with the separator.
set -eu
cat > src/slugify.js <<'JS'
/**
 * slugify(input, { separator = "-" }) → string
 *
 * Turns arbitrary text into a URL slug. See README.md for the rules.
 */
const SPELLED_OUT = {
  ß: "ss", ẞ: "ss", æ: "ae", Æ: "ae", œ: "oe", Œ: "oe", ø: "o", Ø: "o",
  ł: "l", Ł: "l", đ: "d", Đ: "d", ð: "d", Ð: "d", þ: "th", Þ: "th", ı: "i",
};
const SPELLED_OUT_RE = new RegExp(`[${Object.keys(SPELLED_OUT).join("")}]`, "g");

export function slugify(input, options = {}) {
  const separator = options.separator ?? "-";
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

export default slugify;
JS
