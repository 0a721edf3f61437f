import { describe, expect, it } from "vitest";
import { nearestMatchHint, occurrenceLines } from "../../../src/agent/tools/edit-hint.js";

describe("occurrenceLines", () => {
  it("gives the 1-based line of each non-overlapping occurrence", () => {
    expect(occurrenceLines("ab\nx ab\n\nab ab", "ab")).toEqual([1, 2, 4, 4]);
    expect(occurrenceLines("aaaa", "aa")).toEqual([1, 1]);
    expect(occurrenceLines("abc", "z")).toEqual([]);
  });
});

describe("nearestMatchHint", () => {
  it("spots a whitespace-only difference", () => {
    expect(nearestMatchHint("if (x) {\n\treturn 1;\n}", "if (x) {\n  return 1;\n}")).toMatch(/whitespace/);
  });

  it("names the nearest line", () => {
    const text = "const a = 1;\nfunction slugify(input) {\n  return input;\n}";
    expect(nearestMatchHint(text, "function slugfy(input) {")).toContain("nearest line is 2");
  });

  it("claims no near line when nothing is close", () => {
    expect(nearestMatchHint("alpha\nbeta", "zzzz qqqq")).toBe(
      "re-read the file with read_file and copy old_text exactly",
    );
  });
});
