import { existsSync, lstatSync, mkdirSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  assertRealpathInside,
  mkdirInside,
  PathEscapeError,
  resolveInside,
} from "../../src/workspace/safe-path.js";
import { useTempDirs } from "./temp-dirs.js";

describe("resolveInside", () => {
  it("resolves normal paths under the root", () => {
    expect(resolveInside("/r", "a/./b/../c")).toBe("/r/a/c");
    expect(resolveInside("/r", "")).toBe("/r");
  });

  it.each([
    ["..", "climbs above the root"],
    ["a/../../x", "climbs above the root"],
    ["/etc/passwd", "absolute"],
    ["a\0b", "NUL"],
  ])("rejects %j (%s)", (rel, why) => {
    let err: unknown;
    try {
      resolveInside("/r", rel);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PathEscapeError);
    expect((err as PathEscapeError).code).toBe("path_escape");
    expect((err as PathEscapeError).message).toContain("/r");
    expect((err as PathEscapeError).message).toContain(why);
    expect((err as PathEscapeError).path).toBe(rel);
  });
});

describe("assertRealpathInside", () => {
  const tmp = useTempDirs();

  it("accepts paths whose existing part stays inside, even through an inside symlink", async () => {
    const root = tmp();
    mkdirSync(path.join(root, "src"));
    symlinkSync("src", path.join(root, "alias"));
    const real = await assertRealpathInside(root, "alias/new/file.txt");
    expect(path.relative(root, real)).toBe("src/new/file.txt");
  });

  it("rejects a path whose parent is a symlink to outside", async () => {
    const root = tmp();
    const outside = tmp();
    symlinkSync(outside, path.join(root, "out"));
    await expect(assertRealpathInside(root, "out/x")).rejects.toThrow(PathEscapeError);
    await expect(assertRealpathInside(root, "out/x")).rejects.toThrow(/escapes .* resolves to/);
  });

  it("rejects lexical escapes before touching the filesystem", async () => {
    await expect(assertRealpathInside("/nonexistent-root", "../x")).rejects.toThrow(PathEscapeError);
  });
});

describe("mkdirInside", () => {
  const tmp = useTempDirs();

  it("creates nested directories one at a time", () => {
    const root = tmp();
    expect(mkdirInside(root, "a/b/c")).toBe(path.join(root, "a/b/c"));
    expect(lstatSync(path.join(root, "a/b/c")).isDirectory()).toBe(true);
    expect(mkdirInside(root, "a/b/c")).toBe(path.join(root, "a/b/c"));
  });

  it("refuses a symlinked component and writes nothing outside", () => {
    const root = tmp();
    const outside = tmp();
    symlinkSync(outside, path.join(root, "a"));
    expect(() => mkdirInside(root, "a/b")).toThrow(PathEscapeError);
    expect(() => mkdirInside(root, "a/b")).toThrow(/a is a symlink/);
    expect(readdirSync(outside)).toEqual([]);
  });

  it("refuses a file where a directory is needed", () => {
    const root = tmp();
    writeFileSync(path.join(root, "a"), "x");
    expect(() => mkdirInside(root, "a/b")).toThrow(/a is not a directory/);
  });

  it("with replace, swaps a planted symlink for a real directory", () => {
    const root = tmp();
    const outside = tmp();
    symlinkSync(outside, path.join(root, "a"));
    mkdirInside(root, "a/b", { replace: true });
    expect(lstatSync(path.join(root, "a")).isDirectory()).toBe(true);
    expect(existsSync(path.join(root, "a/b"))).toBe(true);
    expect(readdirSync(outside)).toEqual([]);
  });

  it("rejects lexical escapes", () => {
    expect(() => mkdirInside(tmp(), "../x")).toThrow(PathEscapeError);
  });
});
