/** The test runners `loopgate init` writes gates for: each one a runner the tamper checks instrument. */
export const INIT_RUNNERS = ["node-test", "vitest", "jest", "mocha", "tape", "pytest", "unittest"] as const;
export type InitRunner = (typeof INIT_RUNNERS)[number];

/** The JavaScript runners whose program is a package in node_modules. */
export const PACKAGE_RUNNERS: readonly InitRunner[] = ["vitest", "jest", "mocha", "tape"];

/** One runner found in the repository and what showed it. */
export interface RunnerEvidence {
  runner: InitRunner;
  /** Where it was seen, e.g. `package.json scripts.test: "vitest run"`. */
  evidence: string;
}

/** What `loopgate init` found in a repository, enough to write its task file. */
export interface Detection {
  language: "javascript" | "python";
  runner: InitRunner;
  /** Why this runner. */
  evidence: string[];
  /** Other runners the repository also shows (not chosen; `--runner` picks one of them). */
  others: RunnerEvidence[];
  /** The argv before the test paths: `["node_modules/.bin/vitest", "run"]`, `["/usr/bin/python3", "-m", "pytest"]`. */
  launcher: string[];
  /** What the visible-tests gate runs: folders, files, or globs (mocha, tape), relative to the repository. */
  testPaths: string[];
  /** unittest: the `-p` pattern when the test files are not named `test*.py`. */
  unittestPattern: string | null;
  /** Globs covering the repository's tests (protected). */
  testGlobs: string[];
  /** Where held-out tests land in a gate environment when the user has not given a folder of them. */
  heldoutPath: string;
  /** The extension test files use (`.test.js`, `.spec.ts`, `.py`), for examples and globs. */
  testSuffix: string;
  /** Configuration files that exist (protected): the verifier's own settings and the dependency lists. */
  configFiles: string[];
  /** Dependency folders that exist (`node_modules`, `.venv`). */
  dependencyDirs: string[];
  /** Deliverable globs: the folders and files of source code. */
  sources: string[];
  /** Things the user should know (a partial scan, a choice among several runners). */
  notes: string[];
}
