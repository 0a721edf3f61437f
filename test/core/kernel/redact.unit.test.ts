import { describe, expect, it } from "vitest";
import { redactDeep, runSecrets, secretRedactor } from "../../../src/core/kernel/redact.js";

const KEY = "lg-Secret/Value+42&z9";
const b = Buffer.from(KEY, "utf8");
const encodings = {
  plain: KEY,
  base64: b.toString("base64"),
  base64url: b.toString("base64url"),
  hex: b.toString("hex"),
  HEX: b.toString("hex").toUpperCase(),
  url: encodeURIComponent(KEY),
  reversed: [...KEY].reverse().join(""),
};

describe("secretRedactor", () => {
  const redact = secretRedactor([{ name: "MY_KEY", value: KEY }]);

  for (const [how, text] of Object.entries(encodings))
    it(`replaces the value ${how} by [redacted:MY_KEY]`, () => {
      expect(text).not.toBe("");
      const out = redact(`before ${text} after`);
      expect(out).not.toContain(text);
      expect(out).toContain("[redacted:MY_KEY]");
      expect(out.startsWith("before ")).toBe(true);
      expect(out.endsWith(" after")).toBe(true);
    });

  it("a value shorter than 8 characters is never redacted", () => {
    const short = secretRedactor([
      { name: "PORT", value: "8080" },
      { name: "P7", value: "abcdefg" },
    ]);
    expect(short("listening on 8080, abcdefg")).toBe("listening on 8080, abcdefg");
    expect(runSecrets({ A: "1234567", B: "12345678" }, ["A", "B"])).toEqual([
      { name: "B", value: "12345678" },
    ]);
  });

  it("a redacted string is never longer than the original, so no schema limit can be crossed", () => {
    const r = secretRedactor([{ name: "A_RATHER_LONG_VARIABLE_NAME", value: "12345678" }]);
    const text = "12345678".repeat(500);
    const out = r(text);
    expect(out.length).toBeLessThanOrEqual(text.length);
    expect(out).not.toContain("12345678");
    expect(out).toContain("[redacted:A_RATHER_LONG_VARIABLE_NAME]");
  });

  it("provider keys are secrets whether or not they were passed with --builder-env", () => {
    const s = runSecrets({ ANTHROPIC_API_KEY: "sk-ant-0123456789", HOME: "/root/somewhere" }, []);
    expect(s).toEqual([{ name: "ANTHROPIC_API_KEY", value: "sk-ant-0123456789" }]);
  });

  it("redactDeep reaches every string of nested data and leaves other values alone", () => {
    const data = { a: [KEY, { b: `x${encodings.base64}` }], n: 3, f: false, z: null };
    expect(redactDeep(data, redact)).toEqual({
      a: ["[redacted:MY_KEY]", { b: "x[redacted:MY_KEY]" }],
      n: 3,
      f: false,
      z: null,
    });
  });
});
