// Which paths of a commit are tests, and what a task made from it protects and delivers. Pure.
import picomatch from "picomatch";

/** The globs that make a path a test file when `--test-glob` names none. */
export const DEFAULT_TEST_GLOBS: readonly string[] = [
  "**/test/**",
  "**/tests/**",
  "**/__tests__/**",
  "**/test_*.py",
  "**/*_test.py",
  "**/conftest.py",
  "**/*.test.{js,mjs,cjs,jsx,ts,mts,cts,tsx}",
  "**/*.spec.{js,mjs,cjs,jsx,ts,mts,cts,tsx}",
  "**/*_test.go",
];

/** Configuration a gate depends on: protected when present in the starting tree and not part of the fix. */
const CONFIG_FILES = [
  "package.json",
  "package-lock.json",
  "pnpm-lock.yaml",
  "yarn.lock",
  "pyproject.toml",
  "setup.cfg",
  "setup.py",
  "pytest.ini",
  "tox.ini",
  "conftest.py",
  "tsconfig.json",
  ".mocharc.json",
  ".mocharc.yml",
  ".mocharc.js",
  ".mocharc.cjs",
];
const CONFIG_PATTERN = /^(vitest|jest|vite)\.config\.[a-z]+$/;

/** The folder names whose contents are tests (a path's test root ends at the first of them). */
const TEST_DIRS = new Set(["test", "tests", "__tests__"]);

/** A predicate for "is a test file", from the user's globs or the defaults. */
export function testMatcher(globs: readonly string[]): (path: string) => boolean {
  const list = globs.length > 0 ? globs : DEFAULT_TEST_GLOBS;
  return picomatch(list as string[], { dot: true });
}

/** One path a commit touches: `A` added, `M` modified, `D` deleted, `T` type changed. */
export interface ChangedPath {
  status: "A" | "M" | "D" | "T";
  path: string;
}

/** A commit's paths split into the held-out tests and the fix. */
export interface CommitSplit {
  /** Test files the commit adds or changes (its deleted tests cannot be held out). */
  tests: string[];
  /** Every other path it touches, deletions included: what the oracle applies. */
  fix: string[];
}

/** Splits a commit's changed paths by the test predicate. */
export function splitCommit(changes: readonly ChangedPath[], isTest: (p: string) => boolean): CommitSplit {
  const tests: string[] = [];
  const fix: string[] = [];
  for (const c of changes) {
    if (!isTest(c.path)) fix.push(c.path);
    else if (c.status !== "D") tests.push(c.path);
  }
  return { tests, fix };
}

/**
 * `deliverables`: the top folder of every path of the fix (`src/**`), or the file itself at the root.
 * Sorted, each once.
 */
export function deliverablesOf(fix: readonly string[]): string[] {
  const out = new Set<string>();
  for (const p of fix) {
    const slash = p.indexOf("/");
    out.add(slash < 0 ? escapeGlob(p) : `${escapeGlob(p.slice(0, slash))}/**`);
  }
  return [...out].sort();
}

/**
 * `protected`: the test folders of the starting tree that hold test files (`tests/**`), its colocated
 * test files, and the configuration files it has — minus anything the fix itself changes, which the
 * oracle must be free to write. Every entry names something in the starting tree, so none is a glob
 * that matches nothing.
 */
export function protectedOf(
  parentFiles: readonly string[],
  isTest: (p: string) => boolean,
  fix: readonly string[],
): string[] {
  const fixed = new Set(fix);
  const out = new Set<string>();
  for (const p of parentFiles) {
    if (fixed.has(p)) continue;
    const base = p.slice(p.lastIndexOf("/") + 1);
    if (!p.includes("/") && (CONFIG_FILES.includes(base) || CONFIG_PATTERN.test(base))) {
      out.add(escapeGlob(p));
      continue;
    }
    if (!isTest(p)) continue;
    const root = testRoot(p);
    // A folder whose files the fix changes is left to the fix: protecting it would block the oracle.
    if (root !== null && !fix.some((f) => f.startsWith(`${root}/`))) out.add(`${escapeGlob(root)}/**`);
    else if (root === null) out.add(escapeGlob(p));
  }
  return [...out].sort();
}

/** The path up to and including its first test folder (`pkg/tests/a/b.py` → `pkg/tests`), or null. */
export function testRoot(path: string): string | null {
  const parts = path.split("/");
  const at = parts.slice(0, -1).findIndex((s) => TEST_DIRS.has(s));
  return at < 0 ? null : parts.slice(0, at + 1).join("/");
}

/** A literal path as a glob of the task file (its metacharacters escaped). */
export function escapeGlob(path: string): string {
  return path.replace(/[\\*?[\]{}()]/g, "\\$&");
}

/** A task id from the commit: its short sha and a slug of its subject (`3fa9c1e-fix-weeks-parsing`). */
export function taskIdFor(shortSha: string, subject: string): string {
  const slug = subject
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 48)
    .replace(/-+$/, "");
  return slug ? `${shortSha.toLowerCase()}-${slug}` : shortSha.toLowerCase();
}
