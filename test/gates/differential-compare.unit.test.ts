import fc from "fast-check";
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

const json = (x: string, y: string) => sameOutput(b(x), b(y), "json");

describe("json compares integers exactly and other numbers as doubles", () => {
  it("tells apart integers a double cannot (2^53 + 1 against 2^53), at any depth", () => {
    expect(json("9007199254740993", "9007199254740992")).toBe(false);
    expect(json("-9007199254740993", "-9007199254740992")).toBe(false);
    expect(json('{"id":[18446744073709551615]}', '{"id":[18446744073709551614]}')).toBe(false);
    expect(json('{"a":{"b":[1,{"c":9007199254740993}]}}', '{"a":{"b":[1,{"c":9007199254740992}]}}')).toBe(
      false,
    );
  });

  it("finds equal big integers equal, whatever the spacing and key order; -0 is 0", () => {
    expect(json("123456789012345678901234567890", " 123456789012345678901234567890\n")).toBe(true);
    expect(json('{"n":18446744073709551615,"m":-1}', '{ "m": -1, "n": 18446744073709551615 }')).toBe(true);
    expect(json("-0", "0")).toBe(true);
    expect(json("[-0]", "[0]")).toBe(true);
  });

  it("compares numbers with a fraction or exponent by their double value", () => {
    expect(json("0.1", "0.10")).toBe(true);
    expect(json("1e2", "100.0")).toBe(true);
    expect(json("1E+2", "100")).toBe(true);
    expect(json("2.5e-1", "0.25")).toBe(true);
    expect(json("0.1", "0.2")).toBe(false);
    expect(json("1.5", "-1.5")).toBe(false);
    // 1.5 + 1e-16 is within half a unit in the last place of 1.5 (2^-52 * 1 ≈ 2.2e-16): the same double.
    expect(json("1.5", "1.5000000000000001")).toBe(true);
    // 1 + 2^-52 is the next double after 1.
    expect(json("1", "1.0000000000000002")).toBe(false);
    // The declared rule: a float is its double, and an integral double is that integer.
    expect(json("9007199254740993.0", "9007199254740992")).toBe(true);
    expect(json("9007199254740993.0", "9007199254740993")).toBe(false);
    expect(json("1e-400", "0")).toBe(true);
  });

  it("refuses a float beyond the double range rather than reading it as infinity", () => {
    expect(normalise(b("[1e400]"), "json")).toMatchObject({ ok: false, why: expect.stringMatching(/1e400/) });
    expect(json("1e400", "1e999")).toBe(false);
    expect(json("-1e400", "-1e400")).toBe(false);
  });

  it("reads strings as JSON.parse does: escapes, surrogates, and the last of duplicate keys wins", () => {
    expect(json('"\\u00e9\\/"', '"é/"')).toBe(true);
    expect(json('"\\ud83d\\ude00"', '"😀"')).toBe(true);
    expect(json('"\\ud83d"', '"\\ud83e"')).toBe(false);
    expect(json('{"a":1,"a":2}', '{"a":2}')).toBe(true);
    expect(json('{"a":1,"a":2}', '{"a":1}')).toBe(false);
    expect(json('{"a":"x","b":null}', '{"b":null,"a":"x","a":"x"}')).toBe(true);
    expect(json("[true,false,null]", "[true,false,false]")).toBe(false);
  });

  it("compares nested structures by value: key order goes, array order and types stay", () => {
    const x = '{"users":[{"id":1,"tags":["a","b"],"meta":{"x":0.5,"y":null}},{"id":2,"tags":[]}],"n":2}';
    const y =
      '{\n  "n": 2,\n  "users": [\n    {"meta": {"y": null, "x": 5e-1}, "tags": ["a", "b"], "id": 1},\n    {"tags": [], "id": 2}\n  ]\n}\n';
    expect(json(x, y)).toBe(true);
    expect(json(x, y.replace('["a", "b"]', '["b", "a"]'))).toBe(false);
    expect(json(x, y.replace('"tags": []', '"tags": {}'))).toBe(false);
    expect(json(x, y.replace('"n": 2', '"n": "2"'))).toBe(false);
  });

  // A recursive reader runs out of Node's default stack within about 14,000 nested calls; these go deeper.
  it("reads nesting deeper than the call stack", () => {
    const deep = (inner: string, n = 30_000) => `${"[".repeat(n)}${inner}${"]".repeat(n)}`;
    expect(json(deep("1"), deep("1"))).toBe(true);
    expect(json(deep("1"), deep("2"))).toBe(false);
    const objects = (inner: string, n = 15_000) => `${'{"k":[0,'.repeat(n)}${inner}${"]}".repeat(n)}`;
    expect(json(objects("9007199254740993"), objects("9007199254740992"))).toBe(false);
  });

  it("says why invalid JSON is invalid, with its line and column", () => {
    const why = (x: string | Buffer) => {
      const r = normalise(typeof x === "string" ? b(x) : x, "json");
      return r.ok ? "(read)" : r.why;
    };
    // Positions counted by hand: line and column 1-based, the character offset 0-based.
    expect(why('{"a":1,}')).toMatch(/^not valid JSON \(.*line 1 column 8 \(character 7\)\)$/);
    expect(why("[\n  1,\n  2\n  3\n]")).toContain("line 4 column 3 (character 13)");
    expect(why("01")).toContain("line 1 column 2");
    expect(why('"abc')).toContain("unterminated string at line 1 column 1");
    expect(why('"a\tb"')).toContain("line 1 column 3");
    expect(why('"\\x"')).toContain("line 1 column 2");
    expect(why("[1] [2]")).toContain("line 1 column 5");
    expect(why("")).toContain("line 1 column 1");
    expect(why("nul")).toContain("line 1 column 1");
    expect(why("[1e]")).toContain("line 1 column 3");
    expect(why("NaN")).toContain("not valid JSON");
    expect(why("\ufeff1")).toContain("not valid JSON");
    // Two different invalid UTF-8 strings must not both decode to U+FFFD and compare equal.
    expect(why(Buffer.from([0x22, 0xff, 0x22]))).toBe("not valid JSON (not valid UTF-8)");
    expect(sameOutput(Buffer.from([0x22, 0xff, 0x22]), Buffer.from([0x22, 0xfe, 0x22]), "json")).toBe(false);
  });
});

/** Today's rule, kept here as the reference the new reader must agree with where JSON.parse is exact. */
function parseBasedSame(x: string, y: string): boolean {
  const canonical = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(canonical);
    if (v !== null && typeof v === "object")
      return Object.fromEntries(
        Object.keys(v)
          .sort()
          .map((k) => [k, canonical((v as Record<string, unknown>)[k])]),
      );
    return v;
  };
  const text = (s: string) => {
    try {
      return JSON.stringify(canonical(JSON.parse(s)));
    } catch {
      return null;
    }
  };
  const [tx, ty] = [text(x), text(y)];
  return tx !== null && ty !== null && tx === ty;
}

type Plain = number | string | Plain[] | { [k: string]: Plain };

/**
 * Another spelling of the same value: keys in reverse, each object led by a decoy member with a key it
 * repeats later (the last wins), integers sometimes written as `n.0` or `ne0`, and newlines for spacing.
 */
function respell(v: Plain, salt: number): string {
  if (typeof v === "number") return salt % 3 === 0 ? `${v}.0` : salt % 3 === 1 ? `${v}e0` : JSON.stringify(v);
  if (typeof v === "string") return JSON.stringify(v);
  if (Array.isArray(v)) return `[\n${v.map((x, i) => respell(x, salt + i)).join(" ,\n")}\n]`;
  const keys = Object.keys(v).reverse();
  const members = keys.map((k, i) => `${JSON.stringify(k)} : ${respell(v[k] as Plain, salt + i)}`);
  const decoy = keys.length ? [`${JSON.stringify(keys[0])}: "decoy"`] : [];
  return `{ ${[...decoy, ...members].join(",\n")} }`;
}

describe("json agrees with JSON.parse where JSON.parse is exact", () => {
  const { value } = fc.letrec<{ value: Plain }>((tie) => ({
    value: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      fc.maxSafeInteger(),
      fc.integer({ min: -3, max: 3 }),
      fc.string({ unit: "binary" }),
      // Lone surrogates and control characters, which JSON.stringify escapes.
      fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }),
      fc.constantFrom("a", "b", ""),
      fc.array(tie("value"), { maxLength: 4 }),
      fc.dictionary(fc.oneof(fc.constantFrom("a", "b", "__proto__", "1", "10"), fc.string()), tie("value"), {
        maxKeys: 4,
      }),
    ),
  }));

  it("property: for any value of safe integers, strings, arrays and objects, both say the same", () => {
    fc.assert(
      fc.property(value, value, fc.nat(), fc.boolean(), (v, w, salt, same) => {
        const x = JSON.stringify(v);
        // Half the pairs are one value spelled two ways, so both answers (same, differ) are exercised.
        const y = same ? respell(v, salt) : JSON.stringify(w);
        expect(json(x, y)).toBe(parseBasedSame(x, y));
        if (same) expect(json(x, y)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});
