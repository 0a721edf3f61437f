import { describe, expect, it } from "vitest";
import { normalise, sameOutput, showOutput } from "../../src/gates/differential-compare.js";

const b = (s: string) => Buffer.from(s, "utf8");

describe("differential normalisers", () => {
  it("exact compares bytes: a CR, a trailing space or a missing newline differs", () => {
    expect(sameOutput(b("a\nb\n"), b("a\nb\n"), "exact")).toBe(true);
    for (const other of ["a\r\nb\n", "a \nb\n", "a\nb", "b\na\n"])
      expect(sameOutput(b("a\nb\n"), b(other), "exact")).toBe(false);
    // Two different invalid UTF-8 sequences must not both decode to U+FFFD and compare equal.
    expect(sameOutput(Buffer.from([0xff]), Buffer.from([0xfe]), "exact")).toBe(false);
  });

  it("trim_trailing_whitespace ignores spaces, tabs and CRs at line ends and blank lines at the end", () => {
    expect(sameOutput(b("a\nb\n"), b("a  \r\nb\t\n\n\n"), "trim_trailing_whitespace")).toBe(true);
    expect(sameOutput(b("a\nb\n"), b(" a\nb\n"), "trim_trailing_whitespace")).toBe(false);
    expect(sameOutput(b("a\n\nb\n"), b("a\nb\n"), "trim_trailing_whitespace")).toBe(false);
  });

  it("sorted_lines ignores line order only", () => {
    expect(sameOutput(b("b\na\nc\n"), b("a\nc\nb\n"), "sorted_lines")).toBe(true);
    expect(sameOutput(b("a\na\nb\n"), b("a\nb\nb\n"), "sorted_lines")).toBe(false);
    expect(sameOutput(b("a\nb"), b("b\na\n"), "sorted_lines")).toBe(true);
    expect(sameOutput(b("a\nb\n"), b("a\nb\n\n"), "sorted_lines")).toBe(false);
  });

  it("json compares values: key order and spacing do not matter, types and array order do", () => {
    expect(sameOutput(b('{"a":1,"b":[1,2]}'), b('{ "b": [1, 2],\n  "a": 1 }\n'), "json")).toBe(true);
    expect(sameOutput(b('{"a":1}'), b('{"a":"1"}'), "json")).toBe(false);
    expect(sameOutput(b("[1,2]"), b("[2,1]"), "json")).toBe(false);
    expect(normalise(b("{nope"), "json")).toMatchObject({
      ok: false,
      why: expect.stringContaining("not valid JSON"),
    });
    // Output that is not JSON equals nothing, not even itself.
    expect(sameOutput(b("{nope"), b("{nope"), "json")).toBe(false);
  });

  it("shows outputs escaped and bounded", () => {
    expect(showOutput(b("a\r\n\u0007"))).toBe('"a\\r\\n\\u0007"');
    expect(showOutput(b("x".repeat(350)), 300)).toBe(`"${"x".repeat(300)}" […50 more characters]`);
  });
});
