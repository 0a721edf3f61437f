import { createHash } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { type GoalFile, parseGoalFile } from "../../core/goal/goal-file.js";
import { InputError, LoopgateError } from "../../core/kernel/errors.js";
import { type LoadedTask, loadTask } from "../task-source/load-task.js";

/** A parsed goal file with its paths resolved against the goal file's folder. */
export interface LoadedGoal {
  goal: GoalFile;
  file: string;
  dir: string;
  /** The folder the goal workspace is copied from. */
  workspaceSource: string;
  /** Each advancement todo's task file, resolved. */
  tasks: Record<string, string>;
  /** The acceptance items with their task files resolved. */
  acceptance: { task: string; gates: string[] | null }[];
  digest: string;
}

/** Reads, validates and resolves a goal file; every task file it names must load too. */
export function loadGoalFile(path: string): LoadedGoal {
  const file = resolve(path);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new InputError(
      `cannot read the goal file: ${(e as NodeJS.ErrnoException).code ?? String(e)}`,
      path,
    );
  }
  const goal = parseGoalFile(text, path);
  const dir = dirname(file);
  const workspaceSource = resolve(dir, goal.workspace);
  if (!statSync(workspaceSource, { throwIfNoEntry: false })?.isDirectory())
    throw new InputError(`${workspaceSource} is not a directory`, `${path}: workspace`);
  const tasks: Record<string, string> = {};
  goal.todos.forEach((t, i) => {
    if (!t.task) return;
    const task = resolve(dir, t.task);
    taskOrError(task, `${path}: todos[${i}].task`);
    tasks[t.id] = task;
  });
  const acceptance = goal.acceptance.map((a, i) => {
    const task = resolve(dir, a.task);
    const loaded = taskOrError(task, `${path}: acceptance[${i}].task`);
    const declared = loaded.task.gates.map((g) => g.id);
    for (const [j, g] of (a.gates ?? []).entries())
      if (!declared.includes(g))
        throw new InputError(
          `${loaded.task.id} has no gate ${g}; declared: ${declared.join(", ")}`,
          `${path}: acceptance[${i}].gates[${j}]`,
        );
    return { task, gates: a.gates ?? null };
  });
  const digest = createHash("sha256").update(text).digest("hex");
  return { goal, file, dir, workspaceSource, tasks, acceptance, digest };
}

/** Loads a task file a goal names; its own error is kept, prefixed by where the goal names it. */
export function taskOrError(task: string, where: string): LoadedTask {
  try {
    return loadTask(task);
  } catch (e) {
    if (e instanceof LoopgateError) throw new InputError(e.message, where, { cause: e });
    throw e;
  }
}
