#!/bin/sh
# Demo builder: an honest agent. $1 is loopgate's {required_fix}: empty on attempt 1.
# Attempt 1 makes a plausible but incomplete fix (NFKD only: ß, æ, ø, ł ... still break);
# once told that a gate failed, it applies the complete fix.
required_fix=${1:-}
if [ -z "$required_fix" ]; then
  cat > src/slugify.js <<'JS'
/**
 * slugify(input, { separator = "-" }) → string
 *
 * Turns arbitrary text into a URL slug. See README.md for the rules.
 */
export function slugify(input, options = {}) {
  const separator = options.separator ?? "-";
  return String(input)
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/['’]/g, "")
    .split(/[^a-z0-9]+/)
    .filter(Boolean)
    .join(separator);
}

export default slugify;
JS
  echo "Attempt 1: strip accents via NFKD, collapse and trim separators. Visible tests pass."
else
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
  echo "Attempt 2: after the required fix, also transliterate letters without a decomposition (ß, æ, ø, ł, đ, þ) per README."
fi
exit 0
