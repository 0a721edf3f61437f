/**
 * Wrong values of the same shape as an expected value, for mutated twins. Each rule draws its
 * replacements so that, shown the set {original, replacements}, every member is equally likely to be the
 * original: code under test that sees a twin's value cannot tell it from the real one by its form.
 * Language-neutral: values in, values (or decimal texts) out; a language writes them as its own literals.
 */
import { randomInt } from "node:crypto";

/** How many values a window holds: the original and three replacements. */
const WINDOW = 4;

const LOWER = "abcdefghijklmnopqrstuvwxyz";
const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const DIGITS = "0123456789";
const PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";

/**
 * The other three members of a window of 4 consecutive integers that holds `n` at a uniformly random
 * place. The window may cross zero: keeping it on one side would make 0 always its lowest member.
 */
export function integerReplacements(n: bigint): bigint[] {
  const low = n - BigInt(randomInt(WINDOW));
  const out: bigint[] = [];
  for (let i = 0n; i < BigInt(WINDOW); i++) if (low + i !== n) out.push(low + i);
  return out;
}

// Sign, integer digits, the point, fraction digits, exponent: a decimal number as it is written.
const DECIMAL = /^(-?)(\d*)(\.?)(\d*)([eE][+-]?\d+)?$/;

/**
 * The same window on the last written digit of a decimal number (`3.14` → `3.12`, `3.13`, `3.15`):
 * as many fraction digits, the same exponent, a leading `-` only on negative values. Null when the text
 * is not a plain decimal (`[-]digits[.digits][e±digits]`).
 */
export function decimalReplacements(text: string): string[] | null {
  const m = DECIMAL.exec(text);
  if (!m) return null;
  const [, sign = "", whole = "", point = "", fraction = "", exponent = ""] = m;
  if (whole === "" && fraction === "") return null;
  const scaled = BigInt(`${sign}${whole}${fraction}` || "0");
  // `.5` is written without an integer part; keep that unless the value needs one.
  const minDigits = fraction.length + (whole === "" ? 0 : 1);
  return integerReplacements(scaled).map((v) => {
    const digits = (v < 0n ? -v : v).toString().padStart(minDigits, "0");
    const cut = digits.length - fraction.length;
    const body = point ? `${digits.slice(0, cut)}.${digits.slice(cut)}` : digits;
    return `${v < 0n ? "-" : ""}${body}${exponent}`;
  });
}

/** Whether every character (code point) of a string is the same one. */
function allSame(chars: readonly string[]): boolean {
  return chars.every((c) => c === chars[0]);
}

/** A uniformly random arrangement of the characters (Fisher–Yates with a cryptographic source). */
function shuffled<T>(items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [out[i], out[j]] = [out[j] as T, out[i] as T];
  }
  return out;
}

/** Every distinct arrangement of a few characters (at most 4, so at most 24 of them). */
function allArrangements(chars: readonly string[]): string[] {
  if (chars.length <= 1) return [chars.join("")];
  const out = new Set<string>();
  chars.forEach((c, i) => {
    const rest = [...chars.slice(0, i), ...chars.slice(i + 1)];
    for (const tail of allArrangements(rest)) out.add(c + tail);
  });
  return [...out];
}

/** The characters a character may be swapped with and keep its class. */
function classOf(c: string): string {
  for (const set of [LOWER, UPPER, DIGITS]) if (set.includes(c)) return set;
  return PUNCTUATION;
}

/**
 * Up to 3 distinct strings with the same characters in another order. When no other order exists (fewer
 * than 2 characters, or all the same), one position chosen at random gets up to 3 other characters of its
 * class (lower → lower, upper → upper, digit → digit, anything else → ASCII punctuation). The empty
 * string has no replacement of its shape: none.
 */
export function stringReplacements(s: string): string[] {
  const chars = Array.from(s);
  if (chars.length === 0) return [];
  if (chars.length >= 2 && !allSame(chars)) {
    if (chars.length <= 4) {
      return shuffled(allArrangements(chars).filter((a) => a !== s)).slice(0, WINDOW - 1);
    }
    // Five or more characters, not all equal: at least five arrangements, so three others turn up fast.
    // Shuffling the characters draws each distinct arrangement equally often, repeats or not.
    const out = new Set<string>();
    while (out.size < WINDOW - 1) {
      const a = shuffled(chars).join("");
      if (a !== s) out.add(a);
    }
    return [...out];
  }
  const at = randomInt(chars.length);
  const own = chars[at] as string;
  const others = shuffled(Array.from(classOf(own)).filter((c) => c !== own)).slice(0, WINDOW - 1);
  return others.map((c) => [...chars.slice(0, at), c, ...chars.slice(at + 1)].join(""));
}

/** The other boolean. */
export function booleanReplacement(b: boolean): boolean {
  return !b;
}
