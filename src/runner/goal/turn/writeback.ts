import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { WritebackOutcome } from "../../../core/goal/turn/index.js";
import { git } from "../goal-workspace.js";
import type { AcceptedChange } from "./deliverables.js";

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
}

const headRef = async (ws: string) => (await git(ws, ["symbolic-ref", "-q", "HEAD"])).trim();
export const headOf = async (ws: string) =>
  (await git(ws, ["rev-parse", "--verify", "HEAD^{commit}"])).trim();

/**
 * Durable writeback (seed 001 §2): the run's accepted change (the deliverables its gates saw) as ONE git
 * commit on the base revision, its message carrying the turn identity as a trailer, and the branch moved
 * only by a compare-and-swap on the base (`git update-ref NEW BASE`). A moved HEAD is `cas_conflict`
 * (needs_rebase): nothing is forced, nothing is committed on the branch.
 */
export async function writeBack(req: WritebackRequest): Promise<WritebackOutcome> {
  const ws = req.workspace;
  const head = await headOf(ws);
  if (head !== req.base) return { kind: "cas_conflict", current_revision: head };
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
    try {
      await git(ws, [
        "update-ref",
        "-m",
        `loopgate turn ${req.turnKey}`,
        await headRef(ws),
        commit,
        req.base,
      ]);
    } catch {
      // The compare-and-swap lost: someone moved the branch after the check above.
      return { kind: "cas_conflict", current_revision: await headOf(ws) };
    }
    if (req.workTree !== false) await syncWorkTree(ws, req.base, commit);
    return { kind: "accepted", commit, new_revision: commit };
  } catch (e) {
    return { kind: "rejected", reason: `git could not write the change back: ${String(e).split("\n")[0]}` };
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * Brings the workspace's index and files from `from` to `to` after the branch moved (a two-tree merge:
 * a local edit is never overwritten; it then shows as a health issue). Idempotent: already at `to`, it
 * does nothing. Used after a writeback and by readback after a crash between the ref move and this step.
 */
export async function syncWorkTree(ws: string, from: string, to: string): Promise<void> {
  const index = (await git(ws, ["write-tree"])).trim();
  const target = (await git(ws, ["rev-parse", `${to}^{tree}`])).trim();
  if (index === target) return;
  const fromTree = (await git(ws, ["rev-parse", `${from}^{tree}`])).trim();
  if (index !== fromTree) return;
  await git(ws, ["read-tree", "-m", "-u", from, to]).catch(() => {});
}
