/** The most cells (lines before × lines after) a line diff compares; a larger pair is described, not diffed. */
export const MAX_DIFF_CELLS = 4_000_000;

const CONTEXT = 3;

/**
 * A unified diff of two texts (`@@ -a,b +c,d @@` hunks with three lines of context), from a longest common
 * subsequence of their lines. Null when the pair is larger than MAX_DIFF_CELLS: the caller says so.
 */
export function unifiedDiff(before: string, after: string): string | null {
  const a = before === "" ? [] : before.split("\n");
  const b = after === "" ? [] : after.split("\n");
  const n = a.length;
  const m = b.length;
  if ((n + 1) * (m + 1) > MAX_DIFF_CELLS) return null;
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..], kept in one flat array.
  const w = m + 1;
  const lcs = new Uint32Array((n + 1) * w);
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i * w + j] =
        a[i] === b[j]
          ? (lcs[(i + 1) * w + j + 1] as number) + 1
          : Math.max(lcs[(i + 1) * w + j] as number, lcs[i * w + j + 1] as number);
  type Op = { op: " " | "-" | "+"; line: string; ai: number; bi: number };
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) ops.push({ op: " ", line: a[i++] as string, ai: i, bi: ++j });
    // Deletions before additions, as diff(1) prints them.
    else if (i < n && (j === m || (lcs[(i + 1) * w + j] as number) >= (lcs[i * w + j + 1] as number)))
      ops.push({ op: "-", line: a[i++] as string, ai: i, bi: j });
    else ops.push({ op: "+", line: b[j++] as string, ai: i, bi: j });
  }
  const out: string[] = [];
  let k = 0;
  while (k < ops.length) {
    if ((ops[k] as Op).op === " ") {
      k++;
      continue;
    }
    // A hunk: from CONTEXT lines before this change to CONTEXT lines after the last change near it.
    const start = Math.max(0, k - CONTEXT);
    let end = k;
    let last = k;
    while (end < ops.length && end - last <= 2 * CONTEXT) {
      if ((ops[end] as Op).op !== " ") last = end;
      end++;
    }
    end = Math.min(ops.length, last + CONTEXT + 1);
    const hunk = ops.slice(start, end);
    const aStart = hunk.find((o) => o.op !== "+")?.ai ?? (ops[start] as Op).ai;
    const bStart = hunk.find((o) => o.op !== "-")?.bi ?? (ops[start] as Op).bi;
    const aLen = hunk.filter((o) => o.op !== "+").length;
    const bLen = hunk.filter((o) => o.op !== "-").length;
    out.push(`@@ -${aStart}${aLen === 1 ? "" : `,${aLen}`} +${bStart}${bLen === 1 ? "" : `,${bLen}`} @@`);
    for (const o of hunk) out.push(`${o.op}${o.line}`);
    k = end;
  }
  return out.join("\n");
}
