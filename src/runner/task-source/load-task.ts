import { createHash } from "node:crypto";
import { accessSync, constants, existsSync, lstatSync, readFileSync, realpathSync, statSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { InputError } from "../../core/kernel/errors.js";
import { type ResolvedTask, resolveTask } from "../../core/task/resolve-task.js";
import { isSubprocessGate, parseTask, type Task } from "../../core/task/task.js";

/** A parsed task with its paths resolved against the task file's folder. */
export interface LoadedTask {
  task: Task;
  /** The task's settings in milliseconds and bytes, resolved once here: every phase reads these. */
  resolved: ResolvedTask;
  file: string;
  dir: string;
  workspace: string;
  oracle: string | null;
  /** Every path the builder must never see: held-out overlays and the oracle. */
  hidden: string[];
  digest: string;
}

const inside = (parent: string, child: string) => {
  const rel = relative(parent, child);
  return rel === "" || (!rel.startsWith("..") && !rel.startsWith("/"));
};

/** Reads, validates and resolves a task file; every error names the file and the field. */
export function loadTask(path: string): LoadedTask {
  const file = resolve(path);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new InputError(
      `cannot read the task file: ${(e as NodeJS.ErrnoException).code ?? String(e)}`,
      path,
    );
  }
  const task = parseTask(text, path);
  const resolved = resolveTask(task, path);
  const dir = dirname(file);
  const workspace = resolve(dir, task.workspace);
  mustBeDir(workspace, `${path}: workspace`);
  task.dependencies.forEach((d, i) => {
    const problem = dependencyProblem(workspace, d);
    if (!problem) return;
    const line = lineOfDependency(text, d);
    throw new InputError(problem, `${path}${line ? `:${line}` : ""}: dependencies[${i}]`);
  });
  const hidden: string[] = [];
  task.gates.forEach((g, i) => {
    if (!isSubprocessGate(g)) return;
    for (const key of ["heldout", "canary"] as const) {
      const rel = g[key];
      if (!rel) continue;
      const h = resolve(dir, rel);
      mustBeDir(h, `${path}: gates[${i}].${key}`);
      if (inside(workspace, h) || inside(h, workspace))
        throw new InputError(
          `the ${key} folder ${rel} overlaps the workspace ${task.workspace}; held-out material must live outside it`,
          `${path}: gates[${i}].${key}`,
        );
      hidden.push(h);
    }
  });
  task.gates.forEach((g, i) => {
    if (!("differential" in g)) return;
    // A generator's files describe the held-out inputs: like any held-out material, they live outside the workspace.
    g.differential.generator?.run.forEach((arg, j) => {
      const p = resolve(dir, arg);
      if (arg.includes("${") || p === dir || !existsSync(p)) return;
      if (inside(workspace, p))
        throw new InputError(
          `the generator's ${arg} lies inside the workspace ${task.workspace}, where the builder could read it`,
          `${path}: gates[${i}].differential.generator.run[${j}]`,
        );
      hidden.push(p);
    });
  });
  let oracle: string | null = null;
  if (task.oracle) {
    oracle = resolve(dir, task.oracle);
    try {
      accessSync(oracle, constants.X_OK);
    } catch {
      throw new InputError(
        `${task.oracle} does not exist or is not executable (chmod +x)`,
        `${path}: oracle`,
      );
    }
    if (inside(workspace, oracle))
      throw new InputError(
        "the oracle lies inside the workspace, where the builder could read it",
        `${path}: oracle`,
      );
    hidden.push(oracle);
  }
  const digest = createHash("sha256").update(text).digest("hex");
  return { task, resolved, file, dir, workspace, oracle, hidden, digest };
}

function mustBeDir(p: string, where: string): void {
  let ok = false;
  try {
    ok = statSync(p).isDirectory();
  } catch {
    ok = false;
  }
  if (!ok) throw new InputError(`${p} is not a directory`, where);
}

/** Why a declared dependency folder cannot be shared: missing, not a folder, or a symlink (leading anywhere). */
function dependencyProblem(workspace: string, rel: string): string | null {
  const p = resolve(workspace, rel);
  const st = lstatSync(p, { throwIfNoEntry: false });
  if (!st) return `${rel} does not exist in the workspace ${workspace}; install the dependencies there first`;
  if (st.isSymbolicLink())
    return `${rel} is a symbolic link: a dependency must be a real folder of the workspace`;
  if (!st.isDirectory()) return `${rel} is not a folder`;
  if (realpathSync(p) !== resolve(realpathSync(workspace), rel))
    return `${rel} lies behind a symbolic link: a dependency must be a real folder of the workspace`;
  return null;
}

/** The line of the task file that names a dependency (0 when it cannot be told). */
function lineOfDependency(text: string, rel: string): number {
  const lines = text.split("\n");
  const from = lines.findIndex((l) => /^\s*"?dependencies"?\s*:/.test(l));
  if (from < 0) return 0;
  const i = lines.findIndex((l, j) => j >= from && l.includes(rel));
  return i < 0 ? from + 1 : i + 1;
}
