import { createHash } from "node:crypto";
import { accessSync, constants, readFileSync, statSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { InputError } from "../core/errors.js";
import { isSubprocessGate, parseTask, type Task } from "../core/task.js";

/** A parsed task with its paths resolved against the task file's folder. */
export interface LoadedTask {
  task: Task;
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
  const dir = dirname(file);
  const workspace = resolve(dir, task.workspace);
  mustBeDir(workspace, `${path}: workspace`);
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
  return { task, file, dir, workspace, oracle, hidden, digest };
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
