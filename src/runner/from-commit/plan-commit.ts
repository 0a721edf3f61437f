// What task one commit makes, or why it makes none: the parent tree is the workspace, the tests it
// adds or changes are held out, its other changes are the oracle's fix.
import { deliverablesOf, protectedOf, splitCommit, taskIdFor, testMatcher } from "./classify.js";
import { type GateCommand, gateCommandFor } from "./gate-command.js";
import type { CommitInfo, GitRepo } from "./git.js";

/** The options that shape every task of one `from-commit` call. */
export interface FromCommitOptions {
  /** `--test-glob`: the globs of test files (empty: the defaults). */
  testGlobs: readonly string[];
  /** `--gate-cmd`: the held-out gate's argv line, `{tests}` for the held-out test files. */
  gateCmd?: string;
  /** `--prompt`: the builder's prompt instead of the commit message. */
  prompt?: string;
  /** Whether `python3 -m pytest` runs on this machine. */
  pytestAvailable: boolean;
}

/** A task to write: everything taken from git, nothing written yet. */
export interface CommitTaskPlan {
  id: string;
  commit: CommitInfo;
  parent: string;
  prompt: string;
  tests: string[];
  fix: string[];
  deliverables: string[];
  protected: string[];
  gate: GateCommand;
}

/** A commit that makes no task, and why (a sentence for the user). */
export interface CommitSkip {
  skip: string;
  commit: CommitInfo;
}

/** Plans the task of one commit, or says why it makes none. */
export function planCommit(repo: GitRepo, sha: string, opts: FromCommitOptions): CommitTaskPlan | CommitSkip {
  const commit = repo.commit(sha);
  const [parent, ...more] = commit.parents;
  if (parent === undefined)
    return { commit, skip: "a root commit: it has no parent tree to start the builder from" };
  if (more.length > 0)
    return {
      commit,
      skip: `a merge commit (${commit.parents.length} parents): which parent is the starting tree is ambiguous`,
    };
  const isTest = testMatcher(opts.testGlobs);
  const split = splitCommit(repo.changes(parent, commit.sha), isTest);
  if (split.tests.length === 0) return { commit, skip: "it adds or changes no test files" };
  if (split.fix.length === 0)
    return { commit, skip: "it changes only tests: there is no fix for a builder to make" };
  const pkg = repo.read(parent, "package.json");
  const gate = gateCommandFor(
    split.tests,
    { packageJson: pkg?.toString("utf8") ?? null, pytestAvailable: opts.pytestAvailable },
    opts.gateCmd,
  );
  if ("none" in gate) return { commit, skip: gate.none };
  return {
    id: taskIdFor(commit.shortSha, commit.subject),
    commit,
    parent,
    prompt: opts.prompt ?? (commit.message || `Make the change of commit ${commit.shortSha}.`),
    tests: split.tests,
    fix: split.fix,
    deliverables: deliverablesOf(split.fix),
    protected: protectedOf(repo.files(parent), isTest, split.fix),
    gate,
  };
}
