import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { escapeControl } from "../../../src/cli/output/excerpt.js";
import { cleanPath, cleanText } from "../../../src/core/kernel/bounded.js";
import {
  decodePathBytes,
  encodePathBytes,
  fsPath,
  hasRawBytes,
  isEncodedPath,
  pathByteLength,
} from "../../../src/core/kernel/path-bytes.js";
import { comparePaths, createObservation, observationId } from "../../../src/core/observation/observation.js";

/** Strict UTF-8 validity, by the standard decoder's fatal mode (independent of the code under test). */
const validUtf8 = (b: Uint8Array) => {
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(b);
    return true;
  } catch {
    return false;
  }
};

/** Byte strings biased toward the interesting bytes: lead bytes, continuations, surrogate encodings. */
const bytes = fc
  .uint8Array({ maxLength: 40 })
  .chain((plain) =>
    fc
      .array(
        fc.oneof(
          fc.integer({ min: 0, max: 255 }),
          fc.constantFrom(0xc0, 0xc2, 0xc3, 0xe0, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xff, 0x80, 0xa0, 0xbf),
        ),
        { maxLength: 40 },
      )
      .map((extra) => Uint8Array.from([...plain, ...extra])),
  );

describe("path-bytes: the encoding of file names as strings", () => {
  it("is lossless on arbitrary bytes", () => {
    fc.assert(
      fc.property(bytes, (b) => {
        const s = encodePathBytes(b);
        expect(isEncodedPath(s)).toBe(true);
        expect(decodePathBytes(s).equals(Buffer.from(b))).toBe(true);
        expect(pathByteLength(s)).toBe(b.length);
      }),
      { numRuns: 2000 },
    );
  });

  it("is one-to-one: two different byte strings never share an encoding", () => {
    fc.assert(
      fc.property(bytes, bytes, (a, b) => {
        fc.pre(!Buffer.from(a).equals(Buffer.from(b)));
        expect(encodePathBytes(a)).not.toBe(encodePathBytes(b));
      }),
      { numRuns: 2000 },
    );
  });

  it("is the identity on valid UTF-8: every name recorded before it reads the same", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme", maxLength: 30 }), (s) => {
        const raw = Buffer.from(s, "utf8");
        expect(encodePathBytes(raw)).toBe(s);
        expect(hasRawBytes(s)).toBe(false);
        expect(fsPath(s)).toBe(s);
        expect(decodePathBytes(s).equals(raw)).toBe(true);
      }),
      { numRuns: 2000 },
    );
    fc.assert(
      fc.property(bytes, (b) => {
        if (validUtf8(b)) expect(encodePathBytes(b)).toBe(new TextDecoder().decode(b));
        else expect(hasRawBytes(encodePathBytes(b))).toBe(true);
      }),
    );
  });

  it("escapes exactly the bytes outside valid sequences, one escape each", () => {
    // Latin-1 "café": é is the single byte 0xE9, not a UTF-8 sequence.
    expect(encodePathBytes(Buffer.from("caf\xe9.txt", "latin1"))).toBe("caf\uDCE9.txt");
    // Overlong, surrogate and too-large encodings are invalid UTF-8, so each of their bytes is escaped.
    expect(encodePathBytes(Buffer.from([0xc0, 0xaf]))).toBe("\uDCC0\uDCAF");
    expect(encodePathBytes(Buffer.from([0xed, 0xb2, 0x80]))).toBe("\uDCED\uDCB2\uDC80");
    expect(encodePathBytes(Buffer.from([0xf4, 0x90, 0x80, 0x80]))).toBe("\uDCF4\uDC90\uDC80\uDC80");
    // A valid sequence right after an invalid byte stays text.
    expect(encodePathBytes(Buffer.from([0xff, 0xc3, 0xa9]))).toBe("\uDCFFé");
    // A supplementary character (a surrogate pair in a string) is text, even next to an escape.
    const pair = Buffer.concat([Buffer.from("😀"), Buffer.from([0xe9])]);
    expect(encodePathBytes(pair)).toBe("😀\uDCE9");
    expect(decodePathBytes("😀\uDCE9").equals(pair)).toBe(true);
    // The JSON of an encoded path is plain ASCII, and reads back the same.
    expect(JSON.stringify("caf\uDCE9")).toBe('"caf\\udce9"');
    expect(JSON.parse(JSON.stringify("caf\uDCE9"))).toBe("caf\uDCE9");
  });

  it("refuses a string it never produces instead of guessing its bytes", () => {
    for (const stray of ["a\uD800", "a\uDC41", "\uDD00", "\uDBFFx"]) {
      expect(isEncodedPath(stray)).toBe(false);
      expect(() => decodePathBytes(stray)).toThrow(/not an encoded path/);
    }
  });

  it("observation ids tell names apart that differ only in bytes that are not UTF-8", () => {
    const entry = (path: string) => ({ path, type: "file" as const, mode: 0o644, size: 0, hash: "" });
    const a = observationId([entry(encodePathBytes(Buffer.from([0x61, 0xe8])))]);
    const b = observationId([entry(encodePathBytes(Buffer.from([0x61, 0xe9])))]);
    expect(a).not.toBe(b);
    // A UTF-8 path hashes as before: the id of the version-1 serialisation, its text as UTF-8.
    const old = createHash("sha256").update(
      ["loopgate-observation-v1", "ünïcode/é", "file", "644", "0", "", "", ""].join("\x00"),
    );
    expect(observationId([entry("ünïcode/é")])).toBe(old.digest("hex"));
  });

  it("comparePaths is a total order on encoded paths that keeps folders before their contents", () => {
    fc.assert(
      fc.property(
        fc.array(
          bytes.filter((b) => !b.includes(0x2f) && b.length > 0),
          { maxLength: 12 },
        ),
        (names) => {
          const paths = [...new Set(names.map(encodePathBytes))];
          const withKids = paths.flatMap((p) => [p, `${p}/x`]);
          const sorted = [...withKids].sort(comparePaths);
          for (let i = 1; i < sorted.length; i++)
            expect(comparePaths(sorted[i - 1] as string, sorted[i] as string)).toBeLessThan(0);
          for (const p of paths) expect(sorted.indexOf(p)).toBeLessThan(sorted.indexOf(`${p}/x`));
          expect(() =>
            createObservation(withKids.map((p) => ({ path: p, type: "dir", mode: 0, size: 0, hash: "" }))),
          ).not.toThrow();
        },
      ),
    );
  });

  it("an encoded path is kept exact in event path fields and shown as JSON writes it in texts and on a terminal", () => {
    const p = encodePathBytes(Buffer.from("test/caf\xe9.txt", "latin1"));
    expect(cleanPath(p)).toBe(p);
    expect(cleanPath("a\uD800b\u0000")).toBe("a\uFFFDb\\0");
    expect(cleanText(`protected ${p} was modified`)).toBe("protected test/caf\\udce9.txt was modified");
    expect(cleanText("half \uD800 and \uDC41")).toBe("half \uFFFD and \uFFFD");
    expect(escapeControl(p)).toBe("test/caf\\udce9.txt");
    expect(escapeControl("😀 stays")).toBe("😀 stays");
    fc.assert(
      fc.property(bytes, (b) => {
        const s = encodePathBytes(b);
        expect(cleanPath(s)).toBe(s.split(String.fromCharCode(0)).join("\\0"));
      }),
    );
  });
});
