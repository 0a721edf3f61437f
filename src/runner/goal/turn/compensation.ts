import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TodoSpec } from "../../../core/events/goal/goal-events.js";
import { decide } from "../../../core/goal/goal-decider.js";
import type { GoalState } from "../../../core/goal/goal-state-shape.js";
import { nextTurnPhase } from "../../../core/goal/turn/turn-decider.js";
import { DomainError, InputError } from "../../../core/kernel/errors.js";
import type { LeaseOwner } from "../../../core/kernel/event-parts.js";
import type { EventStore } from "../../../store/kernel/event-store.js";
import { thisOwner } from "../../stream/lease-owner.js";
import { git, goalWorkspace } from "../repo/goal-workspace.js";
import { clearStaleLocks, headOf, syncWorkTree } from "../repo/writeback.js";
import { GoalJournal } from "./goal-journal.js";
import { acquireTurnLease, releaseTurnLease } from "./turn-lease-keeper.js";

/** The trailer a compensation's revert commit carries: `goal/reverted-revision` (readback finds it by it). */
export const COMPENSATION_TRAILER = "Loopgate-Compensation";

export interface RevertRequest {
  store: EventStore;
  localDir: string;
  goalId: string;
  /** The accepted change to roll back: a recorded revision of the goal workspace (a unique prefix will do). */
  revision: string;
  /** The todo that takes the reverted work over (a compensation links a successor). */
  successor: TodoSpec;
  reason: string;
  /** Who holds the goal's turn lease meanwhile (`goal status` shows it). */
  holder: string;
  /** Who asked for the revert (meta.by of its operator-origin events); absent: unknown. */
  by?: string;
  owner?: LeaseOwner;
  now?: () => Date;
  /** Test seam: called once the revert commit is on the branch and before the goal records it. */
  afterCommit?: () => void;
}

export interface RevertResult {
  reverted: string;
  revertRevision: string;
  successorId: string;
  /** The revert commit was already on the branch (a run killed before recording it): reused, not redone. */
  reusedCommit: boolean;
  events: string[];
}

/**
 * A rollback of an accepted change: a revert commit on the goal workspace's current revision
 * (its message carries `Loopgate-Compensation: goal/revision`, the branch moved by compare-and-swap), then
 * ONE goal append with the new revision, the successor todo and the `change_compensated` receipt. History
 * is never rewritten. Runs under the goal's turn lease, so no turn writes the workspace meanwhile. Crash
 * recovery by readback: a revert commit already on the branch on the recorded revision is reused; one
 * anywhere else, or two, fail closed.
 */
export async function revertAcceptedChange(req: RevertRequest): Promise<RevertResult> {
  const now = req.now ?? (() => new Date());
  const owner = req.owner ?? thisOwner();
  const j = new GoalJournal(req.store, req.localDir, req.goalId, now);
  await j.refresh();
  await acquireTurnLease(j, req.holder, owner, now);
  j.requireLease(owner.token);
  try {
    const s = j.state;
    const reverted = resolveRevision(s, req.revision, req.goalId);
    const open = openTurn(s);
    if (open)
      throw new DomainError(
        `compensate_change: turn ${open} is not settled; settle it first (loopgate goal tick ${req.goalId}), then revert`,
      );
    const done = s.compensations.find((c) => c.revertedRevision === reverted);
    if (done && done.successorId === req.successor.id)
      // The same compensation again (a retry after it was recorded): its receipt, nothing new.
      return {
        reverted,
        revertRevision: done.revertRevision,
        successorId: done.successorId,
        reusedCommit: true,
        events: [],
      };
    if (done)
      throw new DomainError(
        `compensate_change: rule compensate_once: ${reverted} is already compensated by ${done.revertRevision.slice(0, 12)} (successor ${done.successorId})`,
      );
    const ws = goalWorkspace(req.localDir, req.goalId);
    const key = `${req.goalId}/${reverted}`;
    const base = s.revision;
    const found = await findRevert(ws, key, base);
    let commit: string;
    if (found) commit = found;
    else {
      commit = await commitRevert(ws, base, reverted, key, req.reason);
      req.afterCommit?.();
    }
    let written: string[] = [];
    await j.append(
      (st) => {
        const bodies = decide(
          {
            type: "compensate_change",
            revertedRevision: reverted,
            revertRevision: commit,
            reason: req.reason,
            successor: req.successor,
          },
          st,
        );
        written = bodies.map((b) => b.type);
        return bodies;
      },
      { by: req.by },
    );
    return {
      reverted,
      revertRevision: commit,
      successorId: req.successor.id,
      reusedCommit: found !== null,
      events: written,
    };
  } finally {
    await releaseTurnLease(j, owner.token, "revert finished").catch(() => {});
  }
}

/** The recorded accepted revision `given` names (full id or unique prefix), or a clear refusal. */
function resolveRevision(s: GoalState, given: string, goalId: string): string {
  if (!/^[0-9a-f]{4,64}$/.test(given))
    throw new InputError(
      `not a revision: ${JSON.stringify(given)} (a commit id of the goal workspace)`,
      "REVISION",
    );
  const accepted = s.revisionHistory.slice(1);
  const hits = [...new Set(accepted.filter((r) => r.startsWith(given)))];
  if (hits.length === 1) return hits[0] as string;
  if (hits.length > 1)
    throw new InputError(
      `${given} names ${hits.length} accepted revisions of ${goalId}; give more digits`,
      "REVISION",
    );
  throw new DomainError(
    `compensate_change: rule compensates_accepted_change: ${given} is not an accepted change of ${goalId} (accepted: ${accepted.map((r) => r.slice(0, 12)).join(", ") || "none yet"})`,
  );
}

/** A turn bound but not settled (a tick killed mid-turn), or null. */
function openTurn(s: GoalState): string | null {
  for (const key of s.turnOrder) {
    const t = s.turns[key];
    if (!t?.identity) continue;
    const k = nextTurnPhase(t).kind;
    if (k !== "done" && k !== "released") return key;
  }
  return null;
}

/** The revert commit of `key` on the branch: on `base` → it; none → null; elsewhere or twice → fail closed. */
async function findRevert(ws: string, key: string, base: string): Promise<string | null> {
  const out = await git(ws, [
    "log",
    "HEAD",
    "--fixed-strings",
    `--grep=${COMPENSATION_TRAILER}: ${key}`,
    `--format=%H %P%x09%(trailers:key=${COMPENSATION_TRAILER},valueonly,separator=%x1f)`,
  ]);
  const hits = out
    .split("\n")
    .filter(Boolean)
    .map((r) => {
      const [ids = "", values = ""] = r.split("\t");
      const [commit = "", ...parents] = ids.split(" ");
      return { commit, parents, values: values.split("\x1f").map((v) => v.trim()) };
    })
    .filter((h) => h.values.includes(key));
  if (hits.length === 0) return null;
  const hit = hits[0];
  if (hits.length > 1 || !hit || hit.parents.length !== 1 || hit.parents[0] !== base)
    throw new DomainError(
      `blocked_health: ${hits.length} commit(s) carry ${COMPENSATION_TRAILER}: ${key}, not one on the recorded revision ${base.slice(0, 12)}; which revert is the goal's cannot be told (inspect ${ws})`,
    );
  return hit.commit;
}

/** Makes the revert commit on `base` and moves the branch to it by compare-and-swap; returns its id. */
async function commitRevert(
  ws: string,
  base: string,
  reverted: string,
  key: string,
  reason: string,
): Promise<string> {
  await clearStaleLocks(ws);
  const head = await headOf(ws);
  if (head !== base)
    throw new DomainError(
      `blocked_health: the goal workspace is at ${head.slice(0, 12)}, not at the goal's recorded revision ${base.slice(0, 12)}; see loopgate goal status`,
    );
  const tmp = mkdtempSync(join(tmpdir(), "loopgate-revert-"));
  const env = { GIT_INDEX_FILE: join(tmp, "index") };
  try {
    const patch = join(tmp, "change.patch");
    writeFileSync(
      patch,
      await git(ws, ["diff", "--binary", "--full-index", "--no-renames", `${reverted}^`, reverted]),
    );
    await git(ws, ["read-tree", base], env);
    try {
      await git(ws, ["apply", "--cached", "-R", "--whitespace=nowarn", patch], env);
    } catch (e) {
      const why = String((e as { stderr?: string }).stderr ?? e)
        .trim()
        .split("\n")
        .slice(0, 3)
        .join("; ");
      throw new DomainError(
        `compensate_change: the revert of ${reverted.slice(0, 12)} does not apply on ${base.slice(0, 12)} (${why}); later changes touch the same lines: add a todo that undoes it instead`,
      );
    }
    const tree = (await git(ws, ["write-tree"], env)).trim();
    if (tree === (await git(ws, ["rev-parse", `${base}^{tree}`])).trim())
      throw new DomainError(
        `compensate_change: reverting ${reverted.slice(0, 12)} changes nothing on ${base.slice(0, 12)}`,
      );
    const subject = (await git(ws, ["log", "-1", "--format=%s", reverted])).trim();
    const commit = (
      await git(ws, [
        "commit-tree",
        tree,
        "-p",
        base,
        "-m",
        `loopgate: revert "${subject}"`,
        "-m",
        `Reason: ${reason}`,
        "-m",
        `${COMPENSATION_TRAILER}: ${key}`,
      ])
    ).trim();
    const ref = (await git(ws, ["symbolic-ref", "-q", "HEAD"])).trim();
    try {
      await git(ws, ["update-ref", "-m", `loopgate revert ${key}`, ref, commit, base]);
    } catch (e) {
      throw new DomainError(
        `compensate_change: the goal workspace's branch did not move to the revert (${String(e).split("\n")[0]}); nothing was recorded, try again`,
      );
    }
    await syncWorkTree(ws, base, commit);
    return commit;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
