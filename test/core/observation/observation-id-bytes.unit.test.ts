import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { encodePathBytes, isEncodedPath } from "../../../src/core/kernel/path-bytes.js";
import {
  type EntryType,
  entryIdBytes,
  type ObservedEntry,
  observationId,
  observationIdBytes,
  observationIdOf,
} from "../../../src/core/observation/observation.js";

const sha = (s: string) => createHash("sha256").update(s).digest("hex");

/** Names as a file system gives them: plain text, emoji (surrogate pairs), bytes that are not UTF-8. */
const name = fc.oneof(
  fc.string({ minLength: 1, maxLength: 12 }),
  fc.string({ unit: "grapheme", minLength: 1, maxLength: 6 }),
  fc.uint8Array({ minLength: 1, maxLength: 8 }).map((b) => encodePathBytes(b)),
  fc.constantFrom("caf\udce9.txt", "\u{1F600}/x", "a\udcff\udc80b", "\uffff"),
);

const entry: fc.Arbitrary<ObservedEntry> = fc
  .record({
    path: name,
    type: fc.constantFrom<EntryType>("file", "dir", "symlink", "other"),
    mode: fc.nat(0o7777),
    size: fc.nat(),
    hash: fc.constantFrom("", sha("x")),
    target: fc.option(name, { nil: undefined }),
  })
  .map(({ target, ...e }) => (e.type === "symlink" && target !== undefined ? { ...e, target } : e));

/** A list, then a new list made of runs of it with other entries between, and the id's parts in that order. */
function splice(base: ObservedEntry[], keep: boolean[], inserts: ObservedEntry[][]) {
  const bytes = observationIdBytes(base);
  if (!bytes) throw new Error("unexpected: the base list cannot be split");
  const merged: ObservedEntry[] = [];
  const parts: Uint8Array[] = [];
  base.forEach((e, i) => {
    for (const x of inserts[i] ?? []) {
      merged.push(x);
      parts.push(entryIdBytes(x) as Buffer);
    }
    if (!keep[i]) return;
    merged.push(e);
    parts.push(bytes.bytes.subarray(bytes.offsets[i], bytes.offsets[i + 1]));
  });
  return { merged, parts };
}

describe("observation id from bytes", () => {
  it("hashes the whole list to observationId's id, ends at the offsets' last", () => {
    fc.assert(
      fc.property(fc.array(entry, { maxLength: 40 }), (entries) => {
        const b = observationIdBytes(entries);
        expect(b).not.toBeNull();
        expect(b?.offsets[entries.length]).toBe(b?.bytes.length);
        expect(observationIdOf([b?.bytes as Buffer])).toBe(observationId(entries));
      }),
    );
  });

  it("gives observationId's id for runs of a list with other entries spliced in", () => {
    fc.assert(
      fc.property(
        fc
          .array(entry, { minLength: 1, maxLength: 30 })
          .chain((base) =>
            fc.tuple(
              fc.constant(base),
              fc.array(fc.boolean(), { minLength: base.length, maxLength: base.length }),
              fc.array(fc.array(entry, { maxLength: 2 }), { minLength: base.length, maxLength: base.length }),
            ),
          ),
        ([base, keep, inserts]) => {
          const { merged, parts } = splice(base, keep, inserts);
          expect(observationIdOf(parts)).toBe(observationId(merged));
        },
      ),
    );
  });

  it("agrees with observationId on a tree larger than its 64 KiB chunks, with names that are not UTF-8 in some", () => {
    const base: ObservedEntry[] = [];
    for (let i = 0; i < 6000; i++) {
      const odd = i % 1500 === 7 ? encodePathBytes(Buffer.from([0x66, 0xe9, 0xff])) : "";
      base.push({
        path: `pkg${i % 10}/mod${i % 7}/file${i}${odd}.ts`,
        type: "file",
        mode: 0o644,
        size: i,
        hash: sha(String(i)),
      });
    }
    const keep = base.map((_, i) => i % 997 !== 3);
    const inserts = base.map((_, i) =>
      i % 1201 === 5
        ? [{ path: `new${i}\u{1F600}`, type: "file" as const, mode: 0o600, size: 1, hash: sha("n") }]
        : [],
    );
    const { merged, parts } = splice(base, keep, inserts);
    expect(merged.length).toBeLessThan(base.length);
    expect(observationIdOf(parts)).toBe(observationId(merged));
  });

  it("declines an entry with a surrogate that is no escape, whose bytes depend on its neighbours", () => {
    const stray: ObservedEntry = { path: "a\ud800b", type: "file", mode: 0o644, size: 0, hash: "" };
    expect(isEncodedPath(stray.path)).toBe(false);
    expect(entryIdBytes(stray)).toBeNull();
    expect(observationIdBytes([{ ...stray, path: "ok" }, stray])).toBeNull();
    // Beside an escaped name in one chunk observationId refuses it; alone it hashes a replacement character.
    expect(() => observationId([{ ...stray, path: "caf\udce9" }, stray])).toThrow();
    const replaced = `${["a\ufffdb", "file", "644", "0", "", ""].join("\0")}\0`;
    expect(observationId([stray])).toBe(observationIdOf([Buffer.from(replaced)]));
  });
});
