import { describe, expect, it } from "vitest";
import { sliceLines } from "../../../src/agent/tools/file-ops.js";

const b = (s: string) => Buffer.from(s, "utf8");

describe("sliceLines", () => {
  it("counts lines like `wc -l` plus an unterminated last line, and slices from a 1-based line", () => {
    expect(sliceLines(b("a\nb\nc\n"), 1, 100)).toEqual({ size: 6, totalLines: 3, bytes: b("a\nb\nc\n") });
    expect(sliceLines(b("a\nb\nc"), 2, 100)).toEqual({ size: 5, totalLines: 3, bytes: b("b\nc") });
    expect(sliceLines(b("a\nb\nc\n"), 3, 100).bytes).toEqual(b("c\n"));
  });

  it("bounds the slice by bytes, and is empty past the end or for an empty file", () => {
    expect(sliceLines(b("hello\nworld\n"), 1, 3).bytes).toEqual(b("hel"));
    expect(sliceLines(b("a\nb\n"), 5, 100).bytes).toEqual(b(""));
    expect(sliceLines(b(""), 1, 100)).toEqual({ size: 0, totalLines: 0, bytes: b("") });
  });
});
