import { createHash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  comparePaths,
  createObservation,
  diffObservations,
  type ObservedEntry,
  observationId,
  symlinkEscapes,
} from "../../../src/core/observation/observation.js";

const sha = (s: string) => createHash("sha256").update(s).digest("hex");
const file = (path: string, content = path, mode = 0o644): ObservedEntry => ({
  path,
  type: "file",
  mode,
  size: content.length,
  hash: sha(content),
});
const dir = (path: string, mode = 0o755): ObservedEntry => ({ path, type: "dir", mode, size: 0, hash: "" });
const link = (path: string, target: string): ObservedEntry => ({
  path,
  type: "symlink",
  mode: 0o777,
  size: target.length,
  hash: sha(target),
  target,
});
const obs = (...entries: ObservedEntry[]) => createObservation(entries);

describe("comparePaths", () => {
  it("sorts like the UTF-8 bytes of the paths", () => {
    expect(["a/b", "a-c", "a", "\u{1F600}", "\uFFFF", "B"].sort(comparePaths)).toEqual([
      "B",
      "a",
      "a-c",
      "a/b",
      "\uFFFF",
      "\u{1F600}",
    ]);
  });

  it("agrees with Buffer.compare on any well-formed strings", () => {
    const str = fc.string({ unit: "binary", maxLength: 6 }).filter((s) => s.isWellFormed());
    fc.assert(
      fc.property(str, str, (a, b) => {
        expect(Math.sign(comparePaths(a, b))).toBe(Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b))));
      }),
    );
  });
});

describe("observationId", () => {
  it("depends on every field and is stable", () => {
    const base = [dir("src"), file("src/a.js", "x")];
    const id = observationId(base);
    expect(observationId([dir("src"), file("src/a.js", "x")])).toBe(id);
    expect(observationId([dir("src", 0o700), file("src/a.js", "x")])).not.toBe(id);
    expect(observationId([dir("src"), file("src/a.js", "y")])).not.toBe(id);
    expect(observationId([dir("src"), { ...file("src/a.js", "x"), size: 2 }])).not.toBe(id);
  });

  it("cannot be forged by moving a field boundary", () => {
    const a = observationId([link("ab", "c")]);
    const b = observationId([{ ...link("ab", "c"), path: "a", target: "bc" }]);
    expect(a).not.toBe(b);
  });

  it("createObservation sorts entries and rejects duplicates", () => {
    expect(obs(file("b"), file("a")).entries.map((e) => e.path)).toEqual(["a", "b"]);
    expect(() => obs(file("a"), file("a", "other"))).toThrow(/duplicate/);
  });
});

describe("diffObservations", () => {
  const before = obs(
    dir("src"),
    file("src/a.js", "1"),
    file("src/b.js"),
    file("run.sh", "x", 0o644),
    link("l", "src"),
  );

  it("finds additions, modifications, removals and type changes", () => {
    const after = obs(
      dir("src"),
      file("src/a.js", "2"),
      file("src/c.js"),
      file("run.sh", "x", 0o755),
      link("l", "src/a.js"),
    );
    expect(diffObservations(before, after)).toEqual({
      added: ["src/c.js"],
      modified: ["l", "run.sh", "src/a.js"],
      removed: ["src/b.js"],
      typeChanged: [],
    });
  });

  it("reports a type change once, not as removal plus addition", () => {
    const after = obs(file("src", "now a file"), file("run.sh", "x"), dir("l"));
    const d = diffObservations(before, after);
    expect(d.typeChanged).toEqual(["l", "src"]);
    expect(d.removed).toEqual(["src/a.js", "src/b.js"]);
    expect(d.added).toEqual([]);
  });

  it("compares directories by mode only", () => {
    expect(diffObservations(obs(dir("d")), obs({ ...dir("d"), hash: "ignored" })).modified).toEqual([]);
    expect(diffObservations(obs(dir("d")), obs(dir("d", 0o700))).modified).toEqual(["d"]);
  });

  it("is empty against itself and its categories rebuild the path sets", () => {
    const entry = fc.record({
      path: fc.constantFrom("a", "a/b", "a-b", "b", "b/c", "c"),
      type: fc.constantFrom("file" as const, "dir" as const, "symlink" as const, "other" as const),
      mode: fc.constantFrom(0o644, 0o755),
      hash: fc.constantFrom("h1", "h2"),
    });
    const observation = fc
      .uniqueArray(entry, { selector: (e) => e.path })
      .map((es) => obs(...es.map((e) => ({ ...e, size: 0, hash: e.type === "dir" ? "" : e.hash }))));
    fc.assert(
      fc.property(observation, observation, (a, b) => {
        expect(diffObservations(a, a)).toEqual({ added: [], modified: [], removed: [], typeChanged: [] });
        const d = diffObservations(a, b);
        const pa = new Set(a.entries.map((e) => e.path));
        const pb = new Set(b.entries.map((e) => e.path));
        const rebuilt = new Set([...pa].filter((p) => !d.removed.includes(p)).concat(d.added));
        expect([...rebuilt].sort()).toEqual([...pb].sort());
        const byPath = new Map(b.entries.map((e) => [e.path, e]));
        for (const e of a.entries) {
          const other = byPath.get(e.path);
          const changed = d.modified.includes(e.path) || d.typeChanged.includes(e.path);
          if (other) expect(changed).toBe(JSON.stringify(e) !== JSON.stringify(other));
        }
      }),
    );
  });
});

describe("symlinkEscapes", () => {
  it.each([
    ["l", "/etc/passwd", true],
    ["l", "..", true],
    ["l", "../x", true],
    ["a/l", "../x", false],
    ["a/l", "../../x", true],
    ["a/l", "./b/./c", false],
    ["l", "b/../x", true], // "b" may itself be a link, so ".." after a name is never trusted
    ["a/b/l", "../../c", false],
    ["l", "", true],
  ])("%s -> %s escapes: %s", (path, target, expected) => {
    expect(symlinkEscapes(path, target)).toBe(expected);
  });
});
