import { existsSync, lstatSync, readdirSync, realpathSync } from "node:fs";
import { basename, dirname, extname, isAbsolute, join, relative, resolve } from "node:path";
import { readRegularText } from "../../workspace/safe-read.js";
import { plausibleName } from "./names.js";

/** How many folder entries a search for the user's test files looks at, at most: planning stays cheap. */
const SCAN_LIMIT = 5000;
/** A JavaScript or TypeScript file. */
const SCRIPT = /\.[cm]?[jt]sx?$/;
/** The usual names of test files (`x.test.js`, `x.spec.ts`, `x_test.js`) and Jest's `__tests__` folders. */
const TEST_LIKE = /([._-](test|spec)\.[cm]?[jt]sx?$)|(^|\/)__tests__\/.+\.[cm]?[jt]sx?$/;

function inside(root: string, p: string): boolean {
  const r = relative(root, p);
  return r === "" || (r !== ".." && !r.startsWith("../") && !isAbsolute(r));
}

function kind(p: string): "file" | "dir" | null {
  try {
    const st = lstatSync(p);
    return st.isFile() ? "file" : st.isDirectory() ? "dir" : null;
  } catch {
    return null;
  }
}

/**
 * Test files under `start` (a file or folder), found breadth-first in name order, skipping
 * node_modules, dot folders and symbolic links (the builder may have made them), at most `max`.
 * `test` decides what counts as a test file, from its path relative to `start`'s folder.
 */
export function findTestFiles(
  start: string,
  test: (rel: string) => boolean = (r) => TEST_LIKE.test(r),
  max = 1,
): string[] {
  const k = kind(start);
  if (k === "file") return SCRIPT.test(start) ? [start] : [];
  if (k !== "dir") return [];
  const out: string[] = [];
  const queue = [start];
  let seen = 0;
  while (queue.length && out.length < max && seen < SCAN_LIMIT) {
    const dir = queue.shift() ?? "";
    let names: string[];
    try {
      names = readdirSync(dir).sort();
    } catch {
      continue;
    }
    for (const name of names) {
      if (++seen > SCAN_LIMIT || out.length >= max) break;
      const p = join(dir, name);
      const pk = kind(p);
      if (pk === "dir" && name !== "node_modules" && !name.startsWith(".")) queue.push(p);
      else if (pk === "file" && SCRIPT.test(name) && test(relative(start, p))) out.push(p);
    }
  }
  return out;
}

/** `parse.test.ts` → `.test.ts`, `parse_spec.js` → `_spec.js`, `parse.js` → `.js`: the part a runner's file pattern looks at. */
export function testSuffix(file: string): string {
  const name = basename(file);
  const m = /[._-](test|spec)\.[^/]+$/.exec(name);
  return m ? m[0] : extname(name);
}

/**
 * Where loopgate's canary test file goes: beside `example` (a test file of the user's), named like it
 * (same suffix) so the runner's own file patterns pick it up, or in `fallbackDir` with `fallbackSuffix`.
 * Null when that folder is not inside the gate environment once symbolic links are followed (the
 * builder could point a folder elsewhere) or the name is taken.
 */
export function canaryPath(
  gateEnv: string,
  example: string | null,
  fallbackDir: string,
  fallbackSuffix: string,
): string | null {
  const dir = example ? dirname(example) : resolve(gateEnv, fallbackDir);
  const suffix = example ? testSuffix(example) : fallbackSuffix;
  let realDir: string;
  let realEnv: string;
  try {
    realDir = realpathSync(dir);
    realEnv = realpathSync(gateEnv);
  } catch {
    return null;
  }
  if (!inside(realEnv, realDir)) return null;
  const path = join(dir, `${plausibleName("-")}${suffix}`);
  return existsSync(path) ? null : path;
}

/** Whether Node loads `file` as an ES module: `.mjs`/`.mts`, or `.js`/`.ts` under a package.json with `"type": "module"`. */
export function isEsModule(file: string, gateEnv: string): boolean {
  if (/\.m[jt]s$/.test(file)) return true;
  if (/\.c[jt]s$/.test(file)) return false;
  for (let dir = dirname(file); inside(gateEnv, dir); dir = dirname(dir)) {
    const pkg = join(dir, "package.json");
    if (existsSync(pkg)) {
      try {
        return (JSON.parse(readRegularText(pkg) ?? "") as { type?: unknown }).type === "module";
      } catch {
        return false;
      }
    }
    if (dir === dirname(dir)) break;
  }
  return false;
}
