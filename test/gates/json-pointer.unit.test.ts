import { describe, expect, it } from "vitest";
import { jsonPointer } from "../../src/gates/static-gate.js";

// The example document of RFC 6901, section 5.
const doc = {
  foo: ["bar", "baz"],
  "": 0,
  "a/b": 1,
  "c%d": 2,
  "e^f": 3,
  "g|h": 4,
  "i\\j": 5,
  'k"l': 6,
  " ": 7,
  "m~n": 8,
};

describe("jsonPointer (RFC 6901 section 5)", () => {
  it.each<[string, unknown]>([
    ["", doc],
    ["/foo", ["bar", "baz"]],
    ["/foo/0", "bar"],
    ["/", 0],
    ["/a~1b", 1],
    ["/c%d", 2],
    ["/e^f", 3],
    ["/g|h", 4],
    ["/i\\j", 5],
    ['/k"l', 6],
    ["/ ", 7],
    ["/m~0n", 8],
  ])("%j → %j", (pointer, value) => {
    expect(jsonPointer(doc, pointer)).toEqual(value);
  });

  it("decodes ~01 as the key ~1, not as /", () => {
    expect(jsonPointer({ "~1": "tilde-one", "/": "slash" }, "/~01")).toBe("tilde-one");
  });

  it.each(["/foo/2", "/foo/-", "/foo/01", "/foo/-1", "/foo/1.0", "/nope", "/foo/0/x", "/a~1b/c"])(
    "%j does not exist",
    (pointer) => {
      expect(jsonPointer(doc, pointer)).toBeUndefined();
    },
  );

  it("does not walk into inherited properties", () => {
    expect(jsonPointer({}, "/toString")).toBeUndefined();
    expect(jsonPointer({ a: [] }, "/a/length")).toBeUndefined();
    expect(jsonPointer({}, "/__proto__")).toBeUndefined();
  });

  it("finds null as a value, distinct from absence", () => {
    expect(jsonPointer({ a: null }, "/a")).toBeNull();
  });
});
