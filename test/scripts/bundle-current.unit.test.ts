// When `npm run build` may skip bundling: only when the bundle and its code cache were both made after every
// input (the compiled modules' build info, the entry module, the bundler, the loader, the lockfile).
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { bundleIsCurrent } from "../../scripts/bundle.mjs";

const INPUTS = [
  "dist/.tsbuildinfo",
  "dist/cli/main.js",
  "scripts/bundle.mjs",
  "bin/load-bundle.js",
  "package-lock.json",
];
const OUTPUTS = ["dist/loopgate.cjs", "dist/loopgate.cjs.cache"];

let root = "";
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** A package tree whose inputs were written at t = 1000 s and outputs at t = 2000 s (seconds since 1970). */
function tree(): string {
  root = mkdtempSync(join(tmpdir(), "loopgate-bundle-current-"));
  for (const f of [...INPUTS, ...OUTPUTS]) {
    mkdirSync(dirname(join(root, f)), { recursive: true });
    writeFileSync(join(root, f), "x");
  }
  for (const f of INPUTS) utimesSync(join(root, f), 1000, 1000);
  for (const f of OUTPUTS) utimesSync(join(root, f), 2000, 2000);
  return root;
}

describe("bundleIsCurrent", () => {
  it("holds when both outputs are newer than every input", () => {
    expect(bundleIsCurrent(tree())).toBe(true);
  });

  it.each(INPUTS)("does not hold once %s is newer than the bundle", (input) => {
    const r = tree();
    utimesSync(join(r, input), 3000, 3000);
    expect(bundleIsCurrent(r)).toBe(false);
  });

  it.each([...INPUTS, ...OUTPUTS])("does not hold when %s is missing", (f) => {
    const r = tree();
    rmSync(join(r, f));
    expect(bundleIsCurrent(r)).toBe(false);
  });

  it("does not hold when the cache is older than an input though the bundle is newer", () => {
    const r = tree();
    utimesSync(join(r, "dist/loopgate.cjs.cache"), 500, 500);
    expect(bundleIsCurrent(r)).toBe(false);
  });
});
