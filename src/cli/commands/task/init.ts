import { accessSync, constants, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { InputError } from "../../../core/kernel/errors.js";
import { parseTask } from "../../../core/task/task.js";
import { detectProject } from "../../../runner/init/detect.js";
import { renderTask } from "../../../runner/init/render.js";
import { planTask, type TaskPlan } from "../../../runner/init/task-plan.js";
import type { FlagValues } from "../../flags/flags.js";
import type { CommandIO } from "../../output/io.js";
import { taskCheckCommand } from "./task-check.js";

const inside = (parent: string, child: string) => {
  const r = relative(parent, child);
  return r === "" || (!r.startsWith("..") && !r.startsWith("/"));
};

/** A task id from a folder's name: lower-case letters, digits, `.`, `-`, `_`. */
export function taskIdFor(name: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-")
    .replace(/^[^a-z0-9]+/, "")
    .replace(/-+$/, "");
  return slug || "task";
}

/** An existing path outside the repository, for held-out material and the oracle the builder must never see. */
function outsideRepo(repo: string, given: string, flag: string, kind: "dir" | "exec"): string {
  const p = resolve(given);
  if (!existsSync(p)) throw new InputError(`${given} does not exist`, flag);
  if (inside(repo, p) || inside(p, repo))
    throw new InputError(
      `${given} lies inside the repository (or holds it), where the builder could read it: keep it outside ${repo}`,
      flag,
    );
  if (kind === "dir" && !statSync(p).isDirectory()) throw new InputError(`${given} is not a folder`, flag);
  if (kind === "exec") {
    try {
      accessSync(p, constants.X_OK);
    } catch {
      throw new InputError(`${given} is not executable (chmod +x ${given})`, flag);
    }
  }
  return p;
}

function promptFrom(flags: FlagValues): string | null {
  if (flags.prompt !== undefined && flags["prompt-file"] !== undefined)
    throw new InputError("give --prompt or --prompt-file, not both", "loopgate init");
  if (flags.prompt !== undefined) return flags.prompt.endsWith("\n") ? flags.prompt : `${flags.prompt}\n`;
  if (flags["prompt-file"] === undefined) return null;
  try {
    return readFileSync(flags["prompt-file"], "utf8");
  } catch (e) {
    throw new InputError(
      `cannot read it: ${(e as NodeJS.ErrnoException).code ?? String(e)}`,
      "--prompt-file",
    );
  }
}

/** The default task file: a folder beside the repository, since held-out tests, the oracle and the store must not be inside it. */
export function defaultTaskFile(repo: string): string {
  return join(dirname(repo), `${basename(repo)}-loopgate`, "task.yaml");
}

function summary(plan: TaskPlan, path: string, written: boolean): Record<string, unknown> {
  return {
    path,
    written,
    runner: plan.detection.runner,
    language: plan.detection.language,
    evidence: plan.detection.evidence,
    gates: plan.gates.map((g) => ({ id: g.id, run: g.run, heldout: g.heldout ?? null })),
    proposed_heldout: plan.proposedHeldout
      ? { id: plan.proposedHeldout.id, run: plan.proposedHeldout.run }
      : null,
    protected: plan.protected,
    deliverables: plan.deliverables,
    dependencies: plan.dependencies,
    oracle: plan.oracle,
    notes: plan.notes,
  };
}

/** Runs `task check` on the written file, printing its report (or capturing its JSON). */
async function check(
  io: CommandIO,
  file: string,
  flags: FlagValues,
): Promise<{ code: number; result: unknown }> {
  const runFlags = {
    json: Boolean(flags.json),
    ...(flags.store !== undefined ? { store: flags.store } : {}),
    ...(flags["unsafe-no-sandbox"] ? { "unsafe-no-sandbox": true as const } : {}),
  };
  if (!flags.json) return { code: await taskCheckCommand(io, file, runFlags), result: null };
  const chunks: string[] = [];
  const capture: CommandIO = {
    out: (s) => {
      chunks.push(s);
    },
    err: io.err,
    stderr: io.stderr,
  };
  const code = await taskCheckCommand(capture, file, runFlags);
  try {
    return { code, result: JSON.parse(chunks.join("")) };
  } catch {
    return { code, result: { output: chunks.join("") } };
  }
}

/**
 * `loopgate init [DIR]`: reads a repository, writes a commented task file for it (gates in the argv forms
 * the tamper checks instrument, its tests and settings protected, its sources the deliverables, a held-out
 * gate proposed or wired), then runs `task check` on it when there is an oracle. Asks nothing.
 */
export async function initCommand(
  io: CommandIO,
  dir: string | undefined,
  flags: FlagValues,
): Promise<number> {
  const repo = resolve(dir ?? ".");
  if (!existsSync(repo) || !statSync(repo).isDirectory())
    throw new InputError(`${dir ?? "."} is not a folder`, "loopgate init");
  const detection = detectProject(repo, {
    ...(flags.runner !== undefined ? { runner: flags.runner } : {}),
    ...(flags["test-dir"] !== undefined ? { testDirs: flags["test-dir"] } : {}),
  });
  if (flags.out === undefined && dirname(repo) === repo)
    throw new InputError("the repository is the root folder: name the task file with --out", "loopgate init");
  const taskFile = resolve(flags.out ?? defaultTaskFile(repo));
  if (inside(repo, taskFile))
    throw new InputError(
      `${flags.out} lies inside the repository: the task's held-out tests, oracle, lock and run store live beside the task file, where the builder must never see them`,
      "--out",
    );
  const id = flags.id ?? taskIdFor(basename(repo));
  if (!/^[a-z0-9][a-z0-9._-]*$/.test(id))
    throw new InputError(`${JSON.stringify(id)}: lower-case letters, digits, '.', '-' and '_' only`, "--id");
  const plan = planTask(detection, {
    repo,
    taskFile,
    id,
    prompt: promptFrom(flags),
    oracle: flags["oracle-file"] ? outsideRepo(repo, flags["oracle-file"], "--oracle-file", "exec") : null,
    heldout: flags.heldout ? outsideRepo(repo, flags.heldout, "--heldout", "dir") : null,
  });
  const text = renderTask(plan);
  // What init writes must load: a mistake here is loopgate's, said before anything is written.
  parseTask(text, taskFile);
  if (flags["dry-run"]) {
    io.out(
      flags.json
        ? `${JSON.stringify({ ...summary(plan, taskFile, false), check: null, text }, null, 2)}\n`
        : text,
    );
    return 0;
  }
  if (existsSync(taskFile) && !flags.force)
    throw new InputError(
      `${taskFile} exists; --force overwrites it (its lock, if any, is then stale)`,
      "loopgate init",
    );
  mkdirSync(dirname(taskFile), { recursive: true });
  writeFileSync(taskFile, text);
  if (!flags.json) {
    io.out(`wrote ${taskFile}\n`);
    io.out(`  runner: ${detection.runner} (${detection.evidence.join("; ") || "--runner"})\n`);
    for (const g of plan.gates) io.out(`  gate ${g.id}: ${g.run.join(" ")}\n`);
    if (plan.proposedHeldout)
      io.out(
        `  gate ${plan.proposedHeldout.id}: proposed, commented out (fill ${plan.proposedHeldout.heldout})\n`,
      );
    io.out(
      `  protected: ${plan.protected.join(", ")}\n  deliverables: ${plan.deliverables.join(", ") || "(all but protected)"}\n`,
    );
    for (const n of plan.notes) io.out(`  note: ${n}\n`);
  }
  let checkResult: unknown = null;
  let code = 0;
  if (flags["no-check"]) checkResult = { ran: false, reason: "--no-check" };
  else if (!plan.oracle) {
    checkResult = {
      ran: false,
      reason: "no oracle: task check needs a reference solution (--oracle-file SCRIPT)",
    };
    if (!flags.json)
      io.out(
        "  task check: not run (no oracle); write a reference solution and re-run init with --oracle-file, or add oracle: and run loopgate task check\n",
      );
  } else {
    const r = await check(io, taskFile, flags);
    code = r.code;
    checkResult = r.result;
  }
  if (flags.json)
    io.out(`${JSON.stringify({ ...summary(plan, taskFile, true), check: checkResult }, null, 2)}\n`);
  return code;
}
