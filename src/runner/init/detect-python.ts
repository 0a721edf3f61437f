import { spawnSync } from "node:child_process";
import { InputError } from "../../core/kernel/errors.js";
import type { Detection, InitRunner, RunnerEvidence } from "./detection.js";
import { busiestFirst, configFiles, dependencyDirs, outsideTests, sourceGlobs } from "./repo-layout.js";
import { isRepoDir, isRepoFile, outermost, type RepoFile, type RepoScan, readRepoText } from "./repo-scan.js";

/**
 * The Python the gates start. A gate's sandbox mounts only the system folders, so it is the system's own
 * interpreter, never one from the caller's PATH (pyenv, a virtualenv's shim).
 */
export const GATE_PYTHON = "/usr/bin/python3";

const TEST_FILE = /^(test_.*|.*_test)\.py$/;
const TEST_DIR = /^(tests?|testing)$/;

/** Whether the gates' Python can import pytest (the sandbox sees the same /usr). */
function systemHasPytest(): boolean {
  const r = spawnSync(GATE_PYTHON, ["-c", "import pytest"], { stdio: "ignore", timeout: 30_000 });
  return r.status === 0;
}

/** What says pytest: its settings in the usual files, a conftest.py, pytest in the test files or the requirements. */
function pytestEvidence(scan: RepoScan, tests: readonly RepoFile[]): string | null {
  const text = (f: string) => readRepoText(scan.root, f) ?? "";
  if (isRepoFile(scan.root, "pytest.ini")) return "pytest.ini";
  if (/^\[tool\.pytest/m.test(text("pyproject.toml"))) return "pyproject.toml [tool.pytest…]";
  if (/^\[tool:pytest\]/m.test(text("setup.cfg"))) return "setup.cfg [tool:pytest]";
  if (/^\[pytest\]/m.test(text("tox.ini"))) return "tox.ini [pytest]";
  const conftest = scan.files.find((f) => f.name === "conftest.py");
  if (conftest) return conftest.path;
  const usesPytest = tests.find((f) => /^\s*(import pytest|from pytest\b)/m.test(text(f.path)));
  if (usesPytest) return `${usesPytest.path} imports pytest`;
  const bare = tests.find((f) => /^def test_/m.test(text(f.path)));
  if (bare) return `${bare.path} has test functions outside a TestCase`;
  for (const f of [
    "requirements-dev.txt",
    "requirements-test.txt",
    "requirements.txt",
    "tox.ini",
    "pyproject.toml",
  ])
    if (/\bpytest\b/.test(text(f))) return `${f} names pytest`;
  return null;
}

/** Reads a Python repository: pytest or unittest, its tests, configuration, virtualenv and packages. */
export function detectPython(
  scan: RepoScan,
  options: { runner?: InitRunner; testDirs?: string[] },
): Detection {
  const tests = scan.files.filter((f) => TEST_FILE.test(f.name) && !outsideTests(f));
  const found: RunnerEvidence[] = [];
  const pytest = pytestEvidence(scan, tests);
  if (pytest) found.push({ runner: "pytest", evidence: pytest });
  const unittest = tests.find((f) => /\bunittest\b/.test(readRepoText(scan.root, f.path) ?? ""));
  if (unittest) found.push({ runner: "unittest", evidence: `${unittest.path} uses unittest` });
  const chosen: InitRunner | undefined =
    options.runner ?? found[0]?.runner ?? (tests.length ? "unittest" : undefined);
  let testPaths: string[];
  if (options.testDirs?.length) testPaths = options.testDirs.map((d) => d.replace(/\/+$/, ""));
  else {
    testPaths = busiestFirst(
      outermost(
        tests.map((f) => {
          const i = f.dirs.findIndex((d) => TEST_DIR.test(d));
          return i < 0 ? f.dirs.join("/") || "." : f.dirs.slice(0, i + 1).join("/");
        }),
      ),
      tests,
    );
  }
  if (!chosen || !testPaths.length)
    throw new InputError(
      `no tests found in ${scan.root}: looked for test_*.py and *_test.py files (in tests/, test/ or beside the code); name them with --test-dir`,
    );
  for (const p of testPaths)
    if (!isRepoDir(scan.root, p) && !isRepoFile(scan.root, p))
      throw new InputError(`${p} is not a folder or file of the repository`, "--test-dir");
  if (chosen === "pytest" && !systemHasPytest())
    throw new InputError(
      `pytest is the test runner, but ${GATE_PYTHON} cannot import it (a gate's sandbox runs the system's Python): ` +
        "install it (apt-get install python3-pytest), or use --runner unittest",
      scan.root,
    );
  const notes: string[] = [];
  if (chosen === "unittest" && testPaths.length > 1) {
    notes.push(
      `unittest discovers one folder per run: the gate runs ${testPaths[0]}, not ${testPaths.slice(1).join(", ")}`,
    );
    testPaths = testPaths.slice(0, 1);
  }
  const suffixUnderscore = tests.filter((f) => f.name.endsWith("_test.py")).length > tests.length / 2;
  const isTest = (p: string) =>
    TEST_FILE.test(p.split("/").pop() ?? "") || p.split("/").some((d) => TEST_DIR.test(d));
  const testGlobs = testPaths.map((p) =>
    p === "." ? "**/test_*.py" : isRepoDir(scan.root, p) ? `${p}/**` : p,
  );
  for (const c of scan.files.filter((f) => f.name === "conftest.py" && f.dirs.length > 0))
    if (!testGlobs.some((g) => g.endsWith("/**") && c.path.startsWith(g.slice(0, -2))))
      testGlobs.push(c.path);
  const top = testPaths[0] ?? ".";
  const heldoutPath =
    chosen === "pytest" && top !== "." && isRepoDir(scan.root, top) ? `${top}/heldout` : "heldout_tests";
  const excluded = new Set(testPaths.filter((p) => !p.includes("/")));
  const sources = sourceGlobs(scan, (n) => n.endsWith(".py") || n.endsWith(".pyi"), isTest, excluded);
  return {
    language: "python",
    runner: chosen,
    evidence: found.filter((f) => f.runner === chosen).map((f) => f.evidence),
    others: found.filter((f) => f.runner !== chosen),
    launcher: [GATE_PYTHON, "-m", chosen],
    testPaths,
    unittestPattern: chosen === "unittest" && suffixUnderscore ? "*_test.py" : null,
    testGlobs,
    heldoutPath,
    testSuffix: ".py",
    configFiles: configFiles(scan),
    dependencyDirs: dependencyDirs(scan, "python"),
    sources,
    notes: scan.truncated
      ? ["the repository is large: only its first 20,000 entries were looked at", ...notes]
      : notes,
  };
}
