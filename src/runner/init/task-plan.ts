import { existsSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { InputError } from "../../core/kernel/errors.js";
import type { Detection } from "./detection.js";
import { outermost, scanRepo } from "./repo-scan.js";

/** One subprocess gate of the task file to write, with the comment lines above it. */
export interface PlannedGate {
  id: string;
  run: string[];
  /** The held-out folder, relative to the task file. */
  heldout?: string;
  timeout: string;
  feedback: "log" | "summary";
  comment: string[];
}

/** Everything the task file says, before it is written as text. */
export interface TaskPlan {
  id: string;
  /** null: no prompt given; the file carries a placeholder to replace. */
  prompt: string | null;
  /** The repository, relative to the task file's folder. */
  workspace: string;
  deliverables: string[];
  protected: string[];
  dependencies: string[];
  gates: PlannedGate[];
  /** The held-out gate written as a comment, for the user to fill and turn on (no --heldout given). */
  proposedHeldout: PlannedGate | null;
  /** The oracle, relative to the task file's folder, or null (none given). */
  oracle: string | null;
  detection: Detection;
  notes: string[];
}

/** Where and what: the resolved inputs of `loopgate init`. */
export interface PlanInput {
  repo: string;
  taskFile: string;
  id: string;
  prompt: string | null;
  oracle: string | null;
  heldout: string | null;
}

const rel = (from: string, to: string) => {
  const r = relative(from, to);
  return r.startsWith(".") ? r : `./${r}`;
};

/** The argv a gate runs for `paths` (folders, files or globs) with the detected runner. */
export function gateArgv(d: Detection, root: string, paths: readonly string[]): string[] {
  // A folder that does not exist yet (the proposed held-out one) is a folder when its name has no extension.
  const dir = (p: string) =>
    !/[*?]/.test(p) &&
    !p.endsWith("/") &&
    (existsSync(join(root, p)) ? statSync(join(root, p)).isDirectory() : !/\.[A-Za-z0-9]+$/.test(p));
  switch (d.runner) {
    case "jest":
    case "vitest":
      // Jest's paths are patterns matched against absolute paths, and a gate environment's folder is
      // named after its gate: `test/` matches only a folder named test.
      return [...d.launcher, ...paths.map((p) => (dir(p) ? `${p}/` : p))];
    case "unittest": {
      const start = paths[0] ?? ".";
      const top = start !== "." && existsSync(join(root, start, "__init__.py")) ? ["-t", "."] : [];
      const pattern = d.unittestPattern ? ["-p", d.unittestPattern] : [];
      return [...d.launcher, "discover", "-s", start, ...top, ...pattern];
    }
    default:
      return [...d.launcher, ...paths];
  }
}

/** The paths a held-out gate runs, from the test files of the folder the user gave (laid out like the repository). */
function heldoutPaths(d: Detection, heldout: string): string[] {
  const scan = scanRepo(heldout);
  const isTest =
    d.language === "python"
      ? (n: string) => /^(test_.*|.*_test)\.py$/.test(n)
      : (n: string) => /\.[cm]?[jt]sx?$/.test(n);
  const files = scan.files.filter((f) => isTest(f.name));
  if (!files.length)
    throw new InputError(
      `no test files in ${heldout}: it is overlaid onto the held-out gate's environment, laid out like the repository (e.g. ${d.heldoutPath}/x${d.testSuffix})`,
      "--heldout",
    );
  const dirs = outermost(files.map((f) => f.dirs.join("/") || "."));
  if (dirs.includes(".")) return files.map((f) => f.path);
  if (d.runner === "mocha" || d.runner === "tape") return dirs.map((p) => `${p}/**/*${d.testSuffix}`);
  return dirs;
}

/** Decides the task file's contents: gates in argv forms the tamper checks instrument, protected paths, deliverables. */
export function planTask(d: Detection, input: PlanInput): TaskPlan {
  const taskDir = join(input.taskFile, "..");
  // Dependency folders are shared read-only (their own protection) rather than copied: a runner that
  // writes caches there (Vite's node_modules/.vite) gets a private writable layer in each gate.
  const visible: PlannedGate = {
    id: "tests",
    run: gateArgv(d, input.repo, d.testPaths),
    timeout: "5m",
    feedback: "log",
    comment: [
      "The repository's own tests, as the builder sees them: they keep it honest about what exists, but it",
      "can read them. loopgate instruments the runner (tests by identity, a canary) — keep the argv's form.",
    ],
  };
  const heldoutComment = [
    "Held-out tests: overlaid onto this gate's environment only; the builder never sees them. The folder",
    `is laid out like the repository: ${d.heldoutPath}/… in it lands at ${d.heldoutPath}/… here. Each`,
    "test with a literal expected value gets mutated twins (see `loopgate task check`).",
  ];
  const gates = [visible];
  let proposedHeldout: PlannedGate | null = null;
  if (input.heldout) {
    gates.push({
      id: "heldout-tests",
      run: gateArgv(d, input.heldout, heldoutPaths(d, input.heldout)),
      heldout: rel(taskDir, input.heldout),
      timeout: "5m",
      feedback: "summary",
      comment: heldoutComment,
    });
  } else {
    proposedHeldout = {
      id: "heldout-tests",
      run: gateArgv(d, input.repo, [
        d.runner === "mocha" || d.runner === "tape" ? `${d.heldoutPath}/**/*${d.testSuffix}` : d.heldoutPath,
      ]),
      heldout: "./heldout",
      timeout: "5m",
      feedback: "summary",
      comment: [
        ...heldoutComment,
        `To turn it on: write tests into ${rel(taskDir, join(taskDir, "heldout", d.heldoutPath))}/, remove the`,
        "leading # of this gate, and run `loopgate task check` again (or re-run init with --heldout).",
      ],
    };
  }
  const notes = [...d.notes];
  if (!d.sources.length)
    notes.push(
      "no source folders found: deliverables is empty, so every change outside protected paths reaches the gates",
    );
  return {
    id: input.id,
    prompt: input.prompt,
    workspace: rel(taskDir, input.repo),
    deliverables: d.sources,
    protected: [...new Set([...d.testGlobs, ...d.configFiles])],
    dependencies: d.dependencyDirs,
    gates,
    proposedHeldout,
    oracle: input.oracle ? rel(taskDir, input.oracle) : null,
    detection: d,
    notes,
  };
}
