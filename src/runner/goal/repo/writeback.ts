import { existsSync, lstatSync, mkdtempSync, readlinkSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { WritebackOutcome } from "../../../core/goal/turn/turn-commands.js";
import { hasRawBytes } from "../../../core/kernel/path-bytes.js";
import type { AcceptedChange } from "./deliverables.js";
import { git } from "./goal-workspace.js";

/** The trailer key a writeback commit carries the turn identity in (readback finds it by it). */
export const TURN_TRAILER = "Loopgate-Turn";

export interface WritebackRequest {
  /** The goal workspace repository. */
  workspace: string;
  /** The revision the turn started from: the compare-and-swap's expected HEAD. */
  base: string;
  change: AcceptedChange;
  /** The turn key `goal/agent/turn_instance_id`, carried as the commit's trailer. */
  turnKey: string;
  subject: string;
  /** false: a cache repository whose work tree is never used (a shared store's); default true. */
  workTree?: boolean;
  /** Fault injection for the kill-point tests: called with the point the writeback just reached. */
  atPoint?: (point: WritebackPoint) => void;
}

/** Points inside a writeback a crash test can kill at: the commit object written, the branch moved. */
export type WritebackPoint = "commit_written" | "ref_moved";

const headRef = async (ws: string) => (await git(ws, ["symbolic-ref", "-q", "HEAD"])).trim();
export const headOf = async (ws: string) =>
  (await git(ws, ["rev-parse", "--verify", "HEAD^{commit}"])).trim();

/**
 * Durable writeback: the run's accepted change (the deliverables its gates saw) as ONE git
 * commit on the base revision, its message carrying the turn identity as a trailer, and the branch moved
 * only by a compare-and-swap on the base (`git update-ref NEW BASE`). A moved HEAD is `cas_conflict`
 * (needs_rebase): nothing is forced, nothing is committed on the branch.
 */
export async function writeBack(req: WritebackRequest): Promise<WritebackOutcome> {
  // Not what the run's gates saw: nothing is written, whatever the branch says.
  if (req.change.refusal) return { kind: "rejected", reason: req.change.refusal };
  const ws = req.workspace;
  const { ref } = await clearLocks(ws);
  const head = await headOf(ws);
  if (head !== req.base) return { kind: "cas_conflict", currentRevision: head };
  // git's arguments are strings: a name that is not UTF-8 (path-bytes.ts) would be committed under
  // another name. Refused, never written wrong, until this writeback passes paths as bytes.
  const odd = [...req.change.drop, ...req.change.carry.flatMap((e) => [e.path, e.target ?? ""])].find(
    hasRawBytes,
  );
  if (odd !== undefined)
    return {
      kind: "rejected",
      reason: `${JSON.stringify(odd)} holds a name that is not UTF-8, which the goal workspace cannot commit yet`,
    };
  const tmp = mkdtempSync(join(tmpdir(), "loopgate-writeback-"));
  const env = { GIT_INDEX_FILE: join(tmp, "index") };
  try {
    await git(ws, ["read-tree", req.base], env);
    for (const p of req.change.drop)
      await git(ws, ["rm", "-r", "--cached", "-q", "--ignore-unmatch", "--", p], env);
    for (const e of req.change.carry) {
      if (e.type === "dir") continue;
      let source: string;
      let mode: string;
      if (e.type === "symlink") {
        source = join(tmp, "link");
        writeFileSync(source, e.target ?? "");
        mode = "120000";
      } else if (e.type === "file") {
        source = req.change.blobPath(e.hash);
        mode = e.mode & 0o111 ? "100755" : "100644";
      } else return { kind: "rejected", reason: `${e.path} is neither a file, a link nor a folder` };
      const sha = (await git(ws, ["hash-object", "-w", "--no-filters", "--", source])).trim();
      await git(ws, ["rm", "-r", "--cached", "-q", "--ignore-unmatch", "--", e.path], env);
      await git(ws, ["update-index", "--add", "--cacheinfo", `${mode},${sha},${e.path}`], env);
    }
    const tree = (await git(ws, ["write-tree"], env)).trim();
    const commit = (
      await git(ws, [
        "commit-tree",
        tree,
        "-p",
        req.base,
        "-m",
        req.subject,
        "-m",
        `${TURN_TRAILER}: ${req.turnKey}`,
      ])
    ).trim();
    req.atPoint?.("commit_written");
    try {
      await git(ws, [
        "update-ref",
        "-m",
        `loopgate turn ${req.turnKey}`,
        // The branch HEAD named when the locks were cleared (asked again only when it named none).
        ref || (await headRef(ws)),
        commit,
        req.base,
      ]);
    } catch (e) {
      // The compare-and-swap lost (someone moved the branch after the check above), or git failed.
      const now = await headOf(ws);
      if (now !== req.base) return { kind: "cas_conflict", currentRevision: now };
      return { kind: "rejected", reason: `git could not move the branch: ${String(e).split("\n")[0]}` };
    }
    req.atPoint?.("ref_moved");
    // The locks were just cleared and the branch just moved to `commit` by this call: the sync need not
    // look again before it compares the work tree.
    if (req.workTree !== false) await syncMoved(ws, req.base, commit, []);
    return { kind: "accepted", commit, newRevision: commit };
  } catch (e) {
    return { kind: "rejected", reason: `git could not write the change back: ${String(e).split("\n")[0]}` };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** What bringing the work tree to the new revision did. */
export type WorkTreeSync =
  | { kind: "synced" | "already"; cleared: string[] }
  | { kind: "left"; reason: string; cleared: string[] };

/**
 * Lock files a SIGKILLed git child leaves in the goal workspace: the index's, HEAD's and the branch's.
 * Only the holder of the goal's turn lease writes the goal workspace, so a lock met here is a crashed
 * turn's and is removed (returned, for the progress line). An edit made by hand in the goal workspace
 * while a turn runs is not supported (docs/guides/goals.md says so).
 */
export async function clearStaleLocks(ws: string): Promise<string[]> {
  return (await clearLocks(ws)).cleared;
}

/** `clearStaleLocks`, with the branch HEAD names ("" when none could be read). */
async function clearLocks(ws: string): Promise<{ cleared: string[]; ref: string }> {
  const dotGit = join(ws, ".git");
  const ref = await headRef(ws).catch(() => "");
  const locks = ["index.lock", "HEAD.lock", "packed-refs.lock", ...(ref ? [`${ref}.lock`] : [])];
  const cleared: string[] = [];
  for (const l of locks) {
    const p = join(dotGit, l);
    if (!existsSync(p)) continue;
    rmSync(p, { force: true });
    cleared.push(l);
  }
  return { cleared, ref };
}

/** A path's entry at a revision (`mode sha`), or null when the revision has none. */
async function entryAt(ws: string, rev: string, path: string): Promise<string | null> {
  const out = await git(ws, ["ls-tree", "-z", rev, "--", path]);
  const row = out.split("\0").find((r) => r.endsWith(`\t${path}`));
  if (!row) return null;
  const [mode = "", , sha = ""] = row.split("\t")[0]?.split(" ") ?? [];
  return `${mode === "120000" ? "link" : "file"} ${sha}`;
}

/** The same of the work tree's file (a folder counts as no file). */
async function entryOnDisk(ws: string, path: string): Promise<string | null> {
  const st = lstatSync(join(ws, path), { throwIfNoEntry: false });
  if (!st || st.isDirectory()) return null;
  if (st.isSymbolicLink()) {
    const tmp = mkdtempSync(join(tmpdir(), "loopgate-link-"));
    try {
      writeFileSync(join(tmp, "t"), readlinkSync(join(ws, path)));
      return `link ${(await git(ws, ["hash-object", "--no-filters", "--", join(tmp, "t")])).trim()}`;
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  return `file ${(await git(ws, ["hash-object", "--no-filters", "--", path])).trim()}`;
}

const zList = async (ws: string, args: string[]) => (await git(ws, args)).split("\0").filter(Boolean);

/**
 * Brings the workspace's index and files to `to` after the branch moved from `from` to `to`. Idempotent:
 * already there, it does nothing. Crash-safe: a turn killed anywhere in it (or between the ref move and
 * it) leaves stale locks, an index still at `from`, or some files at `to` and the rest at `from`; the
 * next call clears the locks and finishes the move. A change it cannot explain that way (a file
 * differing from both revisions, or outside the paths the commit changed) is a local edit and is never
 * overwritten: the call leaves it (`left`), and it then shows as the workspace's health problem.
 */
export async function syncWorkTree(ws: string, from: string, to: string): Promise<WorkTreeSync> {
  const cleared = await clearStaleLocks(ws);
  const head = await headOf(ws);
  if (head !== to)
    return { kind: "left", reason: `the branch is at ${head.slice(0, 12)}, not ${to.slice(0, 12)}`, cleared };
  return syncMoved(ws, from, to, cleared);
}

/** `syncWorkTree` once the locks are cleared and the branch is known to be at `to`. */
async function syncMoved(ws: string, from: string, to: string, cleared: string[]): Promise<WorkTreeSync> {
  // Every path the index or the files hold otherwise than `to` (the branch's HEAD here), untracked ones
  // included: staged, unstaged and untracked changes from one `git status` ("XY PATH", NUL-separated).
  const status = await zList(ws, ["status", "--porcelain", "-z", "--no-renames", "--untracked-files=all"]);
  const dirty = new Set(status.map((entry) => entry.slice(3)));
  if (dirty.size === 0) return { kind: "already", cleared };
  const moved = new Set(await zList(ws, ["diff", "--no-renames", "--name-only", "-z", from, to]));
  for (const p of dirty) {
    if (!moved.has(p))
      return {
        kind: "left",
        reason: `${p} was changed in the workspace by hand; it is left as it is`,
        cleared,
      };
    const disk = await entryOnDisk(ws, p);
    if (disk !== (await entryAt(ws, from, p)) && disk !== (await entryAt(ws, to, p)))
      return {
        kind: "left",
        reason: `${p} differs from both ${from.slice(0, 12)} and ${to.slice(0, 12)}; it is left as it is`,
        cleared,
      };
  }
  // Every difference is the interrupted move's own: finish it.
  await git(ws, ["reset", "-q", "--hard", to]);
  return { kind: "synced", cleared };
}
