import { randomInt } from "node:crypto";

// Words a real test suite could use, so a planted file or test does not stand out by its name.
const WORDS = [
  "parse",
  "format",
  "edge",
  "cases",
  "input",
  "output",
  "empty",
  "unicode",
  "boundary",
  "values",
  "errors",
  "options",
  "default",
  "roundtrip",
  "regression",
  "invalid",
  "mixed",
  "long",
  "short",
  "nested",
  "spacing",
  "order",
  "limits",
  "basic",
  "extra",
  "more",
  "misc",
  "behaviour",
  "handling",
] as const;

/** Chooses one element at random. */
export function pick<T>(items: readonly T[]): T {
  const v = items[randomInt(items.length)];
  if (v === undefined) throw new Error("pick from an empty list");
  return v;
}

/** Plausible lower-case words joined by `sep`, with a random number so names never repeat across runs. */
export function plausibleName(sep: string, words = 2): string {
  const parts = Array.from({ length: words }, () => pick(WORDS));
  return [...parts, String(randomInt(10, 1000))].join(sep);
}

/** Two different random literals: a comparison of them must fail. */
export function differentLiterals(): [string, string] {
  const a = plausibleName("-");
  let b = plausibleName("-");
  while (b === a) b = plausibleName("-");
  return [a, b];
}

/** A name unused among `taken`, built by `make`. */
export function freshName(make: () => string, taken: ReadonlySet<string>): string {
  for (;;) {
    const n = make();
    if (!taken.has(n)) return n;
  }
}

/** `n` distinct names built by `make`. */
export function distinctNames(n: number, make: () => string): string[] {
  const out = new Set<string>();
  while (out.size < n) out.add(make());
  return [...out];
}

/** `parse-edge-12` → `ParseEdge12`: a class or test-function name in languages that want one. */
export function camel(words: string): string {
  return words
    .split(/[^a-z0-9]+/)
    .map((w) => (w ? (w[0] ?? "").toUpperCase() + w.slice(1) : ""))
    .join("");
}
