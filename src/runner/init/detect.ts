import { InputError } from "../../core/kernel/errors.js";
import { detectNode } from "./detect-node.js";
import { detectPython } from "./detect-python.js";
import { type Detection, INIT_RUNNERS, type InitRunner } from "./detection.js";
import { isRepoDir, isRepoFile, type RepoScan, scanRepo } from "./repo-scan.js";

const PYTHON_RUNNERS: readonly InitRunner[] = ["pytest", "unittest"];

/** What the user told `loopgate init` about the repository. */
export interface DetectOptions {
  runner?: string;
  testDirs?: string[];
}

function parseRunner(runner: string | undefined): InitRunner | undefined {
  if (runner === undefined) return undefined;
  const r = INIT_RUNNERS.find((x) => x === runner);
  if (!r)
    throw new InputError(
      `unknown runner ${JSON.stringify(runner)}; one of ${INIT_RUNNERS.join(", ")}`,
      "--runner",
    );
  return r;
}

function looksPython(scan: RepoScan): boolean {
  return (
    ["pyproject.toml", "setup.py", "setup.cfg", "pytest.ini", "tox.ini", "conftest.py"].some((f) =>
      isRepoFile(scan.root, f),
    ) || scan.files.some((f) => f.name.endsWith(".py"))
  );
}

/**
 * Reads the repository at `root` and decides its language, test runner, tests, configuration,
 * dependency folders and sources. A repository with both a package.json and Python code is read as
 * JavaScript when its package.json names a test runner, else as Python; `--runner` decides outright.
 */
export function detectProject(root: string, options: DetectOptions = {}): Detection {
  if (!isRepoDir(root, ".")) throw new InputError("not a folder", root);
  const runner = parseRunner(options.runner);
  const scan = scanRepo(root);
  const opts = { ...(runner ? { runner } : {}), ...(options.testDirs ? { testDirs: options.testDirs } : {}) };
  const hasPackage = isRepoFile(root, "package.json");
  if (runner) return PYTHON_RUNNERS.includes(runner) ? detectPython(scan, opts) : detectNode(scan, opts);
  if (hasPackage) {
    try {
      return detectNode(scan, opts);
    } catch (e) {
      if (!looksPython(scan)) throw e;
    }
  }
  if (looksPython(scan)) return detectPython(scan, opts);
  throw new InputError(
    `no test runner found in ${root}: looked for package.json (vitest, jest, mocha, tape, node --test), ` +
      "pyproject.toml, setup.py, setup.cfg, pytest.ini, tox.ini, conftest.py and test_*.py files; " +
      "name one with --runner and the tests with --test-dir",
  );
}
