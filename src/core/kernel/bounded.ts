/**
 * Bounding strings from outside (a builder, a gate log, a model, a file name) before they become an
 * event: one helper, so every event field that such material reaches is cut the same way and says so.
 */

/** The most characters each bounded event field holds (the schemas in events.ts use the same figures). */
export const LIMITS = {
  /** `attempt_started.required_fix`, `required_fix_issued.text`. */
  requiredFix: 8000,
  /** `run_finished.reason`, `infrastructure_failed.reason`. */
  reason: 4000,
  /** A finding's `detail`; a gate run's `summary`. */
  detail: 2000,
  /** `claim_recorded.text`. */
  claim: 4000,
  /** `builder_finished.output_excerpt`, `gate_run_finished.log_excerpt`. */
  excerpt: 16_000,
  /** A gate's tamper `note`. */
  note: 500,
  /** One path named inside a reason or a label. */
  path: 300,
} as const;

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
/** A lone surrogate that is not the escape of a byte of a name that is not UTF-8 (path-bytes.ts). */
const STRAY_SURROGATE =
  /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])(?:[\uDC00-\uDC7F]|[\uDD00-\uDFFF])/g;

/**
 * Replaces what a JSON column, SQLite or a UTF-8 reader cannot hold faithfully: NUL becomes `\0` (two
 * characters); the escaped byte of a name that is not UTF-8 (U+DC80..U+DCFF, path-bytes.ts) is written
 * as JSON writes it, `\udce9`, so a path inside a text reads the same as in the envelope; any other
 * lone UTF-16 surrogate (half of a character, e.g. from a cut) becomes U+FFFD.
 */
export function cleanText(s: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is exactly what is being replaced
  return s.replace(/\u0000/g, "\\0").replace(LONE_SURROGATE, (c) => {
    const code = c.charCodeAt(0);
    return code >= 0xdc80 && code <= 0xdcff ? `\\u${code.toString(16)}` : "\uFFFD";
  });
}

/**
 * A path for an event field that names it (a changed path, a finding's path): as cleanText, except that
 * the escapes of path-bytes.ts are kept as they are, so the path stays the exact encoded path (JSON holds
 * them faithfully, as `\udce9`).
 */
export function cleanPath(s: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is exactly what is being replaced
  return s.replace(/\u0000/g, "\\0").replace(STRAY_SURROGATE, "\uFFFD");
}

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/**
 * `s` cleaned (see cleanText) and cut to at most `max` characters: the head and the tail are kept and
 * the middle is replaced by `[… N characters cut …]`, N the number of characters dropped. `head` is the
 * share of the room given to the head (default one half; logs and claims, whose end matters, use less).
 * Never splits a surrogate pair; the result is always at most `max` characters long.
 */
export function boundText(s: string, max: number, options: { head?: number } = {}): string {
  const text = cleanText(s);
  if (text.length <= max) return text;
  const widest = `\n[… ${text.length} characters cut …]\n`;
  if (max <= widest.length) return cutAt(text, max);
  const room = max - widest.length;
  const share = Number.isFinite(options.head) ? Math.min(1, Math.max(0, options.head as number)) : 0.5;
  let head = Math.floor(room * share);
  let tail = room - head;
  if (head > 0 && isHigh(text.charCodeAt(head - 1))) head--;
  if (tail > 0 && isLow(text.charCodeAt(text.length - tail))) tail--;
  const cut = text.length - head - tail;
  return `${text.slice(0, head)}\n[… ${cut} characters cut …]\n${text.slice(text.length - tail)}`;
}

/** The first `max` characters of `s`, never ending on half a surrogate pair. */
function cutAt(s: string, max: number): string {
  const n = max > 0 && isHigh(s.charCodeAt(max - 1)) ? max - 1 : max;
  return s.slice(0, Math.max(0, n));
}

/**
 * A one-line label for a name from outside (a path inside a reason): cleaned, newlines shown as `\n`,
 * and cut in the middle to `max` characters, so a reason naming five paths stays short.
 */
export function boundName(s: string, max: number = LIMITS.path): string {
  return boundText(s.replace(/\r?\n/g, "\\n"), max).replace(/\n/g, " ");
}

/**
 * The first `max` items of a list and how many were left out, for lists built from outside
 * (findings, paths): `{ kept, dropped }`.
 */
export function boundList<T>(items: readonly T[], max: number): { kept: T[]; dropped: number } {
  return { kept: items.slice(0, max), dropped: Math.max(0, items.length - max) };
}
