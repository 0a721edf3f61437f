import { execFile } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { InfrastructureError, InputError } from "../../../core/kernel/errors.js";
import { copyTree } from "../../../workspace/copy-tree.js";

// The goal workspace: a git repository loopgate owns in the store, so that every accepted change is a
// commit and "the goal's current revision" is one commit id. Nothing here trusts the user's git config.

const run = promisify(execFile);
const GIT_ENV = {
  PATH: "/usr/bin:/bin",
  HOME: "/nonexistent",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_AUTHOR_NAME: "loopgate",
  GIT_AUTHOR_EMAIL: "loopgate@localhost",
  GIT_COMMITTER_NAME: "loopgate",
  GIT_COMMITTER_EMAIL: "loopgate@localhost",
  LC_ALL: "C",
};

/** Called with the arguments of every git process the goal code starts (the turn bench counts them). */
export type GitProcessHook = (args: readonly string[]) => void;
let gitHook: GitProcessHook | null = null;

/** Sets (or clears, with null) the hook told of every git process; for measurement, never for behaviour. */
export function onGitProcess(hook: GitProcessHook | null): void {
  gitHook = hook;
}

/** Tells the hook of one git process about to start. */
export function noteGitProcess(args: readonly string[]): void {
  gitHook?.(args);
}

/** git in a goal workspace, with loopgate's own identity and no user config. */
export async function git(cwd: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  noteGitProcess(args);
  const r = await run("git", args, { cwd, env: { ...GIT_ENV, ...env }, maxBuffer: 16 * 1024 * 1024 });
  return r.stdout;
}

/** The folder of one goal in a store: `<store>/goals/<id>/`. */
export const goalFolder = (localDir: string, goalId: string) => join(localDir, "goals", goalId);
/** The goal's workspace repository. */
export const goalWorkspace = (localDir: string, goalId: string) =>
  join(goalFolder(localDir, goalId), "workspace");

/**
 * Copies `source` (without a `.git` of its own) into `dest`, makes it a git repository and commits it;
 * returns the initial revision. `dest` must not exist.
 */
export async function createGoalWorkspace(source: string, dest: string, goalId: string): Promise<string> {
  if (existsSync(dest))
    throw new InputError(
      `${dest} already exists; a goal's workspace is created once (pick another goal id or another --store)`,
      `goal ${goalId}`,
    );
  mkdirSync(join(dest, ".."), { recursive: true });
  await copyTree(source, dest, { filter: (rel) => rel !== ".git" && !rel.startsWith(".git/") });
  try {
    await git(dest, ["init", "-q", "-b", "main"]);
    await git(dest, ["add", "-A"]);
    await git(dest, [
      "commit",
      "-q",
      "--allow-empty",
      "-m",
      `loopgate: goal ${goalId}: workspace from ${source}`,
    ]);
  } catch (e) {
    rmSync(dest, { recursive: true, force: true });
    throw new InfrastructureError(`git could not create the goal workspace in ${dest}: ${String(e)}`, {
      cause: e,
    });
  }
  return currentRevision(dest);
}

/** The goal workspace's current revision (its HEAD commit id). */
export async function currentRevision(workspace: string): Promise<string> {
  try {
    return (await git(workspace, ["rev-parse", "--verify", "HEAD^{commit}"])).trim();
  } catch (e) {
    throw new InfrastructureError(`the goal workspace ${workspace} has no readable revision: ${String(e)}`, {
      cause: e,
    });
  }
}

/** What the runtime state's health needs to know about the goal workspace. */
export interface WorkspaceHealth {
  revision: string | null;
  /** Empty when the workspace is present, a git repository and clean. */
  problems: { code: string; detail: string }[];
}

/** Checks the goal workspace: present, a repository with a revision, no uncommitted change. */
export async function workspaceHealth(workspace: string): Promise<WorkspaceHealth> {
  if (!statSync(workspace, { throwIfNoEntry: false })?.isDirectory())
    return {
      revision: null,
      problems: [{ code: "workspace_missing", detail: `the goal workspace ${workspace} is missing` }],
    };
  // One git process on the usual path: the HEAD commit and whether anything is uncommitted, together.
  const clean = await cleanHead(workspace);
  if (clean) return { revision: clean, problems: [] };
  let revision: string;
  try {
    revision = await currentRevision(workspace);
  } catch (e) {
    return { revision: null, problems: [{ code: "workspace_no_revision", detail: (e as Error).message }] };
  }
  const dirty = (await git(workspace, ["status", "--porcelain", "--untracked-files=all"])).trim();
  if (dirty) {
    const lines = dirty.split("\n");
    return {
      revision,
      problems: [
        {
          code: "workspace_dirty",
          detail: `the goal workspace ${workspace} has uncommitted changes (${lines.slice(0, 3).join("; ")}${lines.length > 3 ? `; … ${lines.length} in all` : ""}); commit or discard them`,
        },
      ],
    };
  }
  return { revision, problems: [] };
}

/**
 * The HEAD commit of a workspace with nothing uncommitted (untracked files included), from one
 * `git status`; null when it is dirty, has no commit or cannot be read (the caller then looks closer).
 */
async function cleanHead(workspace: string): Promise<string | null> {
  let out: string;
  try {
    out = await git(workspace, ["status", "--porcelain=v2", "--branch", "--untracked-files=all"]);
  } catch {
    return null;
  }
  const lines = out.split("\n").filter(Boolean);
  if (lines.some((l) => !l.startsWith("# "))) return null;
  const oid = lines
    .find((l) => l.startsWith("# branch.oid "))
    ?.slice("# branch.oid ".length)
    .trim();
  return oid && /^[0-9a-f]{40,64}$/.test(oid) ? oid : null;
}

/**
 * The tree of `revision` as a plain folder (no .git), made once per revision under the goal folder:
 * a todo's run starts from exactly this commit, whatever else happens to the workspace meanwhile.
 */
export async function revisionTree(localDir: string, goalId: string, revision: string): Promise<string> {
  if (!/^[0-9a-f]{40,64}$/.test(revision))
    throw new InputError(`not a revision: ${revision}`, `goal ${goalId}`);
  const dest = join(goalFolder(localDir, goalId), "revisions", revision);
  if (existsSync(dest)) return dest;
  const tmp = `${dest}.tmp-${process.pid}-${Date.now()}`;
  mkdirSync(tmp, { recursive: true });
  const ws = goalWorkspace(localDir, goalId);
  try {
    await git(
      tmp,
      ["--git-dir", join(ws, ".git"), "--work-tree", tmp, "checkout", "-f", revision, "--", "."],
      {
        GIT_INDEX_FILE: `${tmp}.index`,
      },
    );
    renameSync(tmp, dest);
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    if (existsSync(dest)) return dest; // another process made it first
    throw new InfrastructureError(`could not read revision ${revision} of ${ws}: ${String(e)}`, { cause: e });
  } finally {
    rmSync(`${tmp}.index`, { force: true });
  }
  return dest;
}
