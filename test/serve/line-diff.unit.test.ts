import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { MAX_DIFF_CELLS, unifiedDiff } from "../../src/serve/line-diff.js";

/** Applies a unified diff to `before` by its hunk headers alone (an independent reader of the format). */
function apply(before: string, diff: string): string {
  const a = before === "" ? [] : before.split("\n");
  const out: string[] = [];
  let next = 0; // index of the next line of `a` not yet copied
  const lines = diff === "" ? [] : diff.split("\n");
  for (let i = 0; i < lines.length; ) {
    const m = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@$/.exec(lines[i] as string);
    if (!m) throw new Error(`not a hunk header: ${lines[i]}`);
    const start = Number(m[1]);
    const len = m[2] === undefined ? 1 : Number(m[2]);
    // A hunk with no old lines starts after line `start`; otherwise at line `start` (1-based).
    const from = len === 0 ? start : start - 1;
    while (next < from) out.push(a[next++] as string);
    i++;
    while (i < lines.length && !(lines[i] as string).startsWith("@@")) {
      const l = lines[i] as string;
      if (l.startsWith(" ")) {
        expect(a[next]).toBe(l.slice(1));
        out.push(a[next++] as string);
      } else if (l.startsWith("-")) {
        expect(a[next]).toBe(l.slice(1));
        next++;
      } else if (l.startsWith("+")) out.push(l.slice(1));
      else throw new Error(`not a diff line: ${l}`);
      i++;
    }
  }
  while (next < a.length) out.push(a[next++] as string);
  return out.join("\n");
}

describe("unifiedDiff", () => {
  it("a one-line change: three lines of context, the old line and the new", () => {
    const before = ["a", "b", "c", "d", "e", "f", "g"].join("\n");
    const after = ["a", "b", "c", "D", "e", "f", "g"].join("\n");
    expect(unifiedDiff(before, after)).toBe(
      ["@@ -1,7 +1,7 @@", " a", " b", " c", "-d", "+D", " e", " f", " g"].join("\n"),
    );
  });

  it("identical texts have no hunk; a new file is all additions from line 0", () => {
    expect(unifiedDiff("x\ny", "x\ny")).toBe("");
    expect(unifiedDiff("", "p\nq")).toBe(["@@ -0,0 +1,2 @@", "+p", "+q"].join("\n"));
  });

  it("applying the diff to the old text gives the new text (any pair of small texts)", () => {
    const text = fc
      .array(fc.constantFrom("a", "b", "c", "d", ""), { maxLength: 30 })
      .map((l) => l.join("\n"));
    fc.assert(
      fc.property(text, text, (before, after) => {
        const d = unifiedDiff(before, after);
        expect(d).not.toBeNull();
        expect(apply(before, d as string)).toBe(after);
      }),
      { numRuns: 300 },
    );
  });

  it("a pair larger than the cap is not diffed (null), never cut silently", () => {
    const side = Math.ceil(Math.sqrt(MAX_DIFF_CELLS)) + 1;
    const big = Array.from({ length: side }, (_, i) => `line ${i}`).join("\n");
    expect(unifiedDiff(big, `${big}\nmore`)).toBeNull();
  });
});
