/**
 * slugify(input, { separator = "-" }) → string
 *
 * Turns arbitrary text into a URL slug. See README.md for the rules.
 */
export function slugify(input, options = {}) {
  const separator = options.separator ?? "-";
  return String(input)
    .toLowerCase()
    .replace(/['’]/g, "")
    .replace(/[^a-z0-9\s-]/g, "")
    .trim()
    .replace(/\s+/g, separator);
}

export default slugify;
