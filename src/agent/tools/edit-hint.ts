/** 1-based line numbers where each non-overlapping occurrence of `needle` starts. */
export function occurrenceLines(text: string, needle: string): number[] {
  const lines: number[] = [];
  let line = 1;
  let scanned = 0;
  for (let i = text.indexOf(needle); i >= 0; i = text.indexOf(needle, i + needle.length)) {
    for (let j = scanned; j < i; j++) if (text.charCodeAt(j) === 10) line++;
    scanned = i;
    lines.push(line);
  }
  return lines;
}

const collapse = (s: string) => s.replace(/\s+/g, " ").trim();

function bigrams(s: string): Map<string, number> {
  const m = new Map<string, number>();
  for (let i = 0; i < s.length - 1; i++) {
    const b = s.slice(i, i + 2);
    m.set(b, (m.get(b) ?? 0) + 1);
  }
  return m;
}

/** Dice coefficient over character bigrams: 1 for equal strings, near 0 for unrelated ones. */
function similarity(a: string, b: string): number {
  if (a === b) return 1;
  if (a.length < 2 || b.length < 2) return 0;
  const ma = bigrams(a);
  let shared = 0;
  for (const [g, n] of bigrams(b)) {
    const k = ma.get(g);
    if (k) {
      shared += Math.min(k, n);
      ma.set(g, k - Math.min(k, n));
    }
  }
  return (2 * shared) / (a.length - 1 + b.length - 1);
}

const MAX_HINT_LINES = 20_000;

/**
 * Why `oldText` may not have matched, for the model: a whitespace-only difference, or the line of
 * the file nearest to old_text's first line. Never claims a match it did not find.
 */
export function nearestMatchHint(text: string, oldText: string): string {
  if (collapse(oldText) && collapse(text).includes(collapse(oldText)))
    return "it matches if whitespace is ignored: copy the indentation, tabs and line breaks exactly";
  const first =
    oldText
      .split("\n")
      .find((l) => l.trim())
      ?.trim() ?? "";
  let best = { line: 0, score: 0, text: "" };
  text
    .split("\n")
    .slice(0, MAX_HINT_LINES)
    .forEach((l, i) => {
      const t = l.trim();
      if (!t || Math.abs(t.length - first.length) > Math.max(first.length, t.length) / 2) return;
      const score = similarity(first, t);
      if (score > best.score) best = { line: i + 1, score, text: l };
    });
  if (best.score >= 0.5)
    return `the nearest line is ${best.line}: ${JSON.stringify(best.text.slice(0, 200))}; re-read the file and copy the text exactly`;
  return "re-read the file with read_file and copy old_text exactly";
}
