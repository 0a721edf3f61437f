import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { InputError } from "../../../core/kernel/errors.js";
import { GitRepo } from "../../../runner/from-commit/git.js";
import { type FromCommitOptions, planCommit } from "../../../runner/from-commit/plan-commit.js";
import { writeCommitTask } from "../../../runner/from-commit/write-task.js";
import type { RunFlags } from "../../../runner/host/run-flags.js";
import { removeTree } from "../../../workspace/remove-tree.js";
import { cutLine, oneLine } from "../../output/excerpt.js";
import type { CommandIO } from "../../output/io.js";
import { type CommitCheck, checkCommitTask } from "./task-from-commit-check.js";

/** The flags of `loopgate task from-commit`. */
export interface FromCommitFlags extends RunFlags {
  repo?: string;
  out?: string;
  "gate-cmd"?: string;
  prompt?: string;
  "test-glob"?: string[];
  force?: boolean;
  "keep-refused"?: boolean;
}

/** One commit's outcome, as printed and as `--json` lists it. */
export interface FromCommitResult {
  sha: string;
  short_sha: string;
  subject: string;
  status: "kept" | "skipped" | "refused";
  reason: string | null;
  task_id: string | null;
  /** The task file of a kept task, or of a refused one kept with --keep-refused. */
  task: string | null;
  oracle: CommitCheck["oracle"];
  noop: CommitCheck["noop"];
}

/** Where tasks go when --out is not given. */
export const DEFAULT_OUT = "loopgate-tasks";

/**
 * `loopgate task from-commit REV|A..B`: a task per commit from a repository's own history. The parent
 * tree is the workspace, the tests the commit adds or changes are held out, the rest of its change is
 * the oracle; `task check` must find the tests failing before and passing after, else the task is
 * refused (and removed unless --keep-refused).
 */
export async function taskFromCommitCommand(
  io: CommandIO,
  rev: string,
  flags: FromCommitFlags,
): Promise<number> {
  const repo = new GitRepo(resolve(flags.repo ?? "."));
  const out = resolve(flags.out ?? DEFAULT_OUT);
  const single = !rev.includes("..");
  let shas: string[];
  if (single) {
    const sha = repo.resolveCommit(rev);
    const c = repo.commit(sha);
    if (c.parents.length === 0)
      throw new InputError(
        `${rev} is a root commit: it has no parent tree to start a builder from`,
        "loopgate task from-commit",
      );
    if (c.parents.length > 1)
      throw new InputError(
        `${rev} is a merge commit (${c.parents.length} parents): name one of the commits it merges, or a range`,
        "loopgate task from-commit",
      );
    shas = [sha];
  } else {
    const m = /^(.+?)\.\.(\.?)(.+)$/.exec(rev);
    if (!m || m[2] === ".")
      throw new InputError(
        `${JSON.stringify(rev)} is not a range REV1..REV2 (three dots are not supported)`,
        "loopgate task from-commit",
      );
    shas = repo.range(m[1] as string, m[3] as string);
    if (shas.length === 0)
      throw new InputError(`the range ${rev} holds no commits`, "loopgate task from-commit");
  }
  const opts: FromCommitOptions = {
    testGlobs: flags["test-glob"] ?? [],
    ...(flags["gate-cmd"] !== undefined ? { gateCmd: flags["gate-cmd"] } : {}),
    ...(flags.prompt !== undefined ? { prompt: flags.prompt } : {}),
    pytestAvailable: spawnSync("python3", ["-c", "import pytest"], { stdio: "ignore" }).status === 0,
  };
  let stop = false;
  const onSignal = () => {
    stop = true;
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const results: FromCommitResult[] = [];
  let couldNotRun = false;
  try {
    for (const [i, sha] of shas.entries()) {
      if (stop) break;
      const r = await fromOneCommit(io, repo, sha, out, opts, flags, `[${i + 1}/${shas.length}]`);
      couldNotRun ||= r.couldNotRun;
      // A check cut short by Ctrl-C says nothing about the commit.
      if (stop && r.result.status === "refused") r.result.reason = `interrupted: ${r.result.reason ?? ""}`;
      results.push(r.result);
      if (!flags.json) io.out(`${formatResult(r.result, out)}\n`);
    }
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
  const count = (s: FromCommitResult["status"]) => results.filter((r) => r.status === s).length;
  const summary = {
    commits: shas.length,
    examined: results.length,
    kept: count("kept"),
    skipped: count("skipped"),
    refused: count("refused"),
    interrupted: stop,
  };
  if (flags.json) io.out(`${JSON.stringify({ repo: repo.dir, out, results, summary }, null, 2)}\n`);
  else
    io.out(
      `${summary.kept} kept, ${summary.skipped} skipped, ${summary.refused} refused` +
        ` of ${summary.commits} commit(s)${summary.interrupted ? ` (interrupted after ${summary.examined})` : ""}` +
        `${summary.kept > 0 ? `; tasks in ${out}` : ""}\n`,
    );
  if (single && couldNotRun) return 2;
  return summary.kept > 0 ? 0 : 1;
}

async function fromOneCommit(
  io: CommandIO,
  repo: GitRepo,
  sha: string,
  out: string,
  opts: FromCommitOptions,
  flags: FromCommitFlags,
  progress: string,
): Promise<{ result: FromCommitResult; couldNotRun: boolean }> {
  const plan = planCommit(repo, sha, opts);
  const base = {
    sha: plan.commit.sha,
    short_sha: plan.commit.shortSha,
    subject: plan.commit.subject,
    oracle: null,
    noop: null,
  };
  if ("skip" in plan)
    return {
      result: { ...base, status: "skipped", reason: plan.skip, task_id: null, task: null },
      couldNotRun: false,
    };
  let written: { dir: string; taskFile: string };
  try {
    written = await writeCommitTask(repo, plan, out, Boolean(flags.force));
  } catch (e) {
    if (!(e instanceof InputError)) throw e;
    return {
      result: { ...base, status: "skipped", reason: e.message, task_id: plan.id, task: null },
      couldNotRun: false,
    };
  }
  io.err(
    `${progress} ${plan.commit.shortSha} ${cutLine(oneLine(plan.commit.subject), 60)}: task check (oracle, then no-op)…\n`,
  );
  const check = await checkCommitTask(io, written.taskFile, flags);
  const keep = check.ok || Boolean(flags["keep-refused"]);
  if (!keep) await removeTree(written.dir);
  return {
    result: {
      ...base,
      status: check.ok ? "kept" : "refused",
      reason: check.reason,
      task_id: plan.id,
      task: keep ? written.taskFile : null,
      oracle: check.oracle,
      noop: check.noop,
    },
    couldNotRun: check.couldNotRun,
  };
}

function formatResult(r: FromCommitResult, out: string): string {
  const head = `${r.status.padEnd(8)} ${r.short_sha} ${cutLine(oneLine(r.subject), 60)}`;
  if (r.status === "kept") return `${head} → ${r.task ?? out}`;
  return `${head}: ${r.reason ?? ""}${r.task ? ` (kept in ${r.task})` : ""}`;
}
