// The held-out gate's argv for a commit's tests: `--gate-cmd`, else a runner detected from the
// starting tree and the test files. Pure: what the tree holds is passed in.
import { splitCommandLine } from "../../builders/command-line.js";
import { InputError } from "../../core/kernel/errors.js";

/** What detection reads of the starting tree. */
export interface TreeFacts {
  /** The text of its package.json, if it has one. */
  packageJson: string | null;
  /** Whether `python3 -m pytest` works on this machine (the gate runs the host's Python). */
  pytestAvailable: boolean;
}

/** The gate's argv and the runner it was chosen for (`--gate-cmd` when the user gave it). */
export interface GateCommand {
  argv: string[];
  runner: string;
}

const PYTHON_TEST = /(^|\/)(test_[^/]*|[^/]*_test)\.py$/;
const JS_EXT = /\.(js|mjs|cjs|jsx|ts|mts|cts|tsx)$/;
const JS_NAMED_TEST = /\.(test|spec)\.[a-z]+$/;
const JS_TEST_DIR = /(^|\/)(test|tests|__tests__)\//;
const JS_HELPER_DIR = /(^|\/)(fixtures?|helpers?|support|utils|__fixtures__|__mocks__)\//;

/** The held-out files a runner should be given by name: test modules, not fixtures or helpers. */
export function runnableTests(tests: readonly string[]): { python: string[]; js: string[] } {
  const python = tests.filter((t) => PYTHON_TEST.test(t));
  const js = tests.filter(
    (t) => JS_EXT.test(t) && (JS_NAMED_TEST.test(t) || (JS_TEST_DIR.test(t) && !JS_HELPER_DIR.test(t))),
  );
  return { python, js };
}

/** The JavaScript framework a package.json declares (first of vitest, jest, mocha, tape), if any. */
function jsFramework(packageJson: string | null): "vitest" | "jest" | "mocha" | "tape" | null {
  if (packageJson === null) return null;
  let pkg: Record<string, unknown>;
  try {
    pkg = JSON.parse(packageJson) as Record<string, unknown>;
  } catch {
    return null;
  }
  const deps = { ...(pkg.dependencies as object), ...(pkg.devDependencies as object) } as Record<
    string,
    unknown
  >;
  for (const name of ["vitest", "jest", "mocha", "tape"] as const) if (name in deps) return name;
  return null;
}

/**
 * The gate command for held-out `tests`. `--gate-cmd` is an argv line (no shell) where `{tests}` stands
 * for the runnable held-out files, one word each. Otherwise Python tests run under pytest (when this
 * machine has it, else unittest) and JavaScript ones under the framework package.json declares, else
 * `node --test`: each an argv form loopgate's tamper checks recognise. Null when nothing fits.
 */
export function gateCommandFor(
  tests: readonly string[],
  facts: TreeFacts,
  userLine?: string,
): GateCommand | { none: string } {
  const { python, js } = runnableTests(tests);
  if (userLine !== undefined) {
    let words: string[];
    try {
      words = splitCommandLine(userLine);
    } catch (e) {
      throw new InputError((e as Error).message.replace(/^--builder: /, ""), "--gate-cmd");
    }
    const files = [...python, ...js];
    return { argv: words.flatMap((w) => (w === "{tests}" ? files : [w])), runner: "--gate-cmd" };
  }
  if (python.length > 0 && js.length === 0)
    return facts.pytestAvailable
      ? { argv: ["python3", "-m", "pytest", ...python], runner: "pytest" }
      : { argv: ["python3", "-m", "unittest", ...python], runner: "unittest" };
  if (js.length > 0 && python.length === 0) {
    const framework = jsFramework(facts.packageJson);
    switch (framework) {
      case "vitest":
        return { argv: ["node_modules/.bin/vitest", "run", ...js], runner: "vitest" };
      case "jest":
      case "mocha":
      case "tape":
        return { argv: [`node_modules/.bin/${framework}`, ...js], runner: framework };
      case null:
        return { argv: ["node", "--test", ...js], runner: "node-test" };
    }
  }
  if (python.length > 0) return { none: "it adds both Python and JavaScript tests; pass --gate-cmd" };
  return {
    none: `no runner loopgate knows for its tests (${tests.slice(0, 3).join(", ")}${tests.length > 3 ? ", …" : ""}); pass --gate-cmd "ARGV"`,
  };
}
