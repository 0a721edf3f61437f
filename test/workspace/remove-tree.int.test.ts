import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { removeTree, removeTreeSync } from "../../src/workspace/remove-tree.js";

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "lg-rmtree-"));
});
afterEach(() => {
  try {
    removeTreeSync(root);
  } catch {
    rmSync(root, { recursive: true, force: true });
  }
});

/** A chain of folders whose full path is longer than PATH_MAX (4096), with a set-uid binary at the bottom. */
function deepTree(top: string): string {
  const parts = Array.from({ length: 120 }, (_, i) => `level-${i}-${"d".repeat(40)}`);
  let rel = top;
  // mkdirSync with the whole path would itself hit ENAMETOOLONG: build it in steps below PATH_MAX.
  for (let i = 0; i < parts.length; i += 40) {
    const chunk = parts.slice(i, i + 40).join("/");
    mkdirSync(join(rel, chunk), { recursive: true });
    rel = join(rel, chunk);
    if (rel.length > 3000) {
      process.chdir(rel);
      rel = ".";
    }
  }
  copyFileSync("/usr/bin/true", join(rel, "helper"));
  chmodSync(join(rel, "helper"), 0o4755);
  process.chdir(tmpdir());
  return top;
}

describe("removeTree", () => {
  test("removes a tree deeper than PATH_MAX with a set-uid file at its bottom (Node's own rm cannot)", async () => {
    const top = deepTree(join(root, "env"));
    await expect(
      import("node:fs/promises").then((f) => f.rm(top, { recursive: true, force: true })),
    ).rejects.toThrow(/ENAMETOOLONG/);
    await removeTree(top);
    expect(existsSync(top)).toBe(false);
  });

  test("removes folders whose modes refuse entry, synchronously too", () => {
    const top = join(root, "locked");
    mkdirSync(join(top, "a", "b"), { recursive: true });
    chmodSync(join(top, "a"), 0o000);
    removeTreeSync(top);
    expect(existsSync(top)).toBe(false);
  });

  test("a missing folder is nothing to remove", async () => {
    await removeTree(join(root, "never-made"));
    expect(existsSync(join(root, "never-made"))).toBe(false);
  });
});
