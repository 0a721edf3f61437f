// Writes one planned task folder: repo/ (the parent tree), heldout/ (the commit's tests, at their own
// paths, overlaid onto the gate environment), fix.patch + solution.sh (the oracle), task.yaml.
import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { stringify } from "yaml";
import { InputError } from "../../core/kernel/errors.js";
import { removeTree } from "../../workspace/remove-tree.js";
import type { GitRepo } from "./git.js";
import type { CommitTaskPlan } from "./plan-commit.js";

/** The id of the one gate a commit's task has: its held-out tests. */
export const HELDOUT_GATE = "heldout-tests";

/**
 * The oracle: replays the commit's non-test changes with `git apply`, outside any repository (the
 * ceiling stops git from finding one above the workspace). It runs in the oracle's sandbox, which
 * mounts the task folder (so fix.patch) read-only and /usr (so git).
 */
const SOLUTION = `#!/bin/sh
# The commit's own fix (its changes outside the tests), replayed on the parent tree.
set -eu
here=$(CDPATH= cd -- "$(dirname -- "$0")" && pwd)
GIT_CEILING_DIRECTORIES=$(dirname -- "$PWD") git apply --whitespace=nowarn "$here/fix.patch"
`;

/** Writes the task folder `out/<id>`; an existing one is refused unless `force` (then replaced). */
export async function writeCommitTask(
  repo: GitRepo,
  plan: CommitTaskPlan,
  out: string,
  force: boolean,
): Promise<{ dir: string; taskFile: string }> {
  const dir = join(out, plan.id);
  if (existsSync(dir)) {
    if (!force) throw new InputError(`its task folder ${dir} already exists (--force replaces it)`);
    await removeTree(dir);
  }
  mkdirSync(dir, { recursive: true });
  await repo.exportTree(plan.parent, join(dir, "repo"));
  const heldout = join(dir, "heldout");
  for (const path of plan.tests) {
    const bytes = repo.read(plan.commit.sha, path);
    if (bytes === null) throw new InputError(`cannot read ${path} at ${plan.commit.sha}`, plan.id);
    const target = resolve(heldout, path);
    if (!target.startsWith(heldout + sep))
      throw new InputError(`${path} leaves the held-out folder`, plan.id);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, bytes);
  }
  writeFileSync(join(dir, "fix.patch"), repo.diff(plan.parent, plan.commit.sha, plan.fix));
  writeFileSync(join(dir, "solution.sh"), SOLUTION);
  chmodSync(join(dir, "solution.sh"), 0o755);
  const taskFile = join(dir, "task.yaml");
  writeFileSync(taskFile, taskYaml(plan));
  return { dir, taskFile };
}

/** The task file's text: a header saying where it came from, then the task. */
export function taskYaml(plan: CommitTaskPlan): string {
  const task = {
    id: plan.id,
    prompt: `${plan.prompt.replace(/\s+$/, "")}\n`,
    workspace: "./repo",
    deliverables: plan.deliverables,
    protected: plan.protected,
    gates: [
      {
        id: HELDOUT_GATE,
        run: plan.gate.argv,
        heldout: "./heldout",
        timeout: "120s",
        feedback: "summary",
      },
    ],
    budget: { attempts: 3 },
    oracle: "./solution.sh",
  };
  const header = [
    `# Made by loopgate task from-commit from commit ${plan.commit.sha}:`,
    `#   ${plan.commit.subject.slice(0, 200)}`,
    "# repo/ is its parent's tree; heldout/ holds the tests it adds or changes (at their own paths, overlaid",
    `# onto the gate environment only); solution.sh replays its other changes (fix.patch). Gate runner: ${plan.gate.runner}.`,
    "",
  ].join("\n");
  return `${header}${stringify(task, { lineWidth: 0 })}`;
}
