import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TurnIdentity } from "../../../core/events/goal/turn-events.js";
import type { Readback, WritebackOutcome } from "../../../core/goal/turn/turn-commands.js";
import { InfrastructureError } from "../../../core/kernel/errors.js";
import { ContentMissingError, type ContentStore, contentHash } from "../../../store/kernel/content-store.js";
import type { EventStore } from "../../../store/kernel/event-store.js";
import type { AcceptedChange } from "./deliverables.js";
import { loadTurnEffect, saveTurnEffect, turnEffectName } from "./effect-files.js";
import {
  createGoalWorkspace,
  git,
  goalWorkspace,
  noteGitProcess,
  revisionTree,
  type WorkspaceHealth,
  workspaceHealth,
} from "./goal-workspace.js";
import { readbackWriteback } from "./readback.js";
import { syncWorkTree, TURN_TRAILER, type WritebackPoint, writeBack } from "./writeback.js";

/**
 * Where a goal's workspace and its kept turn effects live: the one interface writeback, readback, the
 * turn's host work and acceptance use, so a goal works the same on both stores.
 *
 * - A folder store (SQLite): the goal workspace `<store>/goals/<id>/workspace` IS the repository of
 *   record (its HEAD is the goal's revision) and turn effects are files beside it (unchanged behaviour).
 * - A shared store (PostgreSQL, `store.content()`): the repository of record is in the store. Every
 *   revision is a git pack of the objects it adds to its parent, kept as a content-addressed blob, plus a
 *   commit record naming the pack and the parent; a writeback adds a turn record (the turn key → its
 *   commit) after its commit's objects. The goal stream holds the authoritative revision. Each host keeps
 *   a local cache repository under its own folder (`<work dir>/goals/<id>/workspace`), filled from the
 *   store on demand and never trusted beyond what the store holds: a commit a killed worker made locally
 *   and never uploaded is absent, so its writeback is done again (the goal stream's expected revision
 *   and the turn lease are the compare-and-swap that records it once).
 */
export interface GoalRepo {
  readonly kind: "folder" | "shared";
  /** Creates the goal's repository from `source` (its first commit); returns the initial revision and where it is kept. */
  create(source: string, goalId: string): Promise<{ revision: string; path: string }>;
  /** What the goal's runtime health needs to know: the repository holds the revision, and (folder) is clean at it. */
  health(goalId: string, recorded: string): Promise<WorkspaceHealth>;
  /** The tree of `revision` as a plain folder on this machine (a todo's run starts from it). */
  tree(goalId: string, revision: string): Promise<string>;
  /** The accepted change as one commit on `base`, compare-and-swap on the goal's revision `recorded`. */
  writeBack(req: RepoWriteback): Promise<WritebackOutcome>;
  /** The writeback commit of `turnKey` by its trailer: committed, absent or unknown. */
  readbackWriteback(goalId: string, turnKey: string, base: string): Promise<Readback>;
  /**
   * After a readback found the commit: finish what the crash interrupted on this host (folder: move the
   * work tree from `base` to `commit`, clearing stale git locks). Returns a line for the progress, or null.
   */
  finishReadback(goalId: string, base: string, commit: string): Promise<string | null>;
  /** Keeps a monitor poll's or planner turn's host result (write once); returns its run_ref. */
  saveEffect(id: TurnIdentity, data: unknown): Promise<string>;
  /** The kept host result of a turn, or null when none was kept. */
  loadEffect<T>(id: TurnIdentity): Promise<T | null>;
}

export interface RepoWriteback {
  goalId: string;
  base: string;
  /** The goal's revision as the goal stream holds it now. */
  recorded: string;
  change: AcceptedChange;
  turnKey: string;
  subject: string;
  /** Fault injection for the kill-point tests (see turn/writeback.ts). */
  atPoint?: (point: WritebackPoint) => void;
}

/** The goal repository of `store`: shared when the store keeps content beyond this machine, else the folder's. */
export function goalRepo(store: EventStore, localDir: string): GoalRepo {
  const content = store.content?.();
  return content ? new SharedGoalRepo(content, localDir) : new FolderGoalRepo(localDir);
}

/** A folder store: the local workspace is the repository of record (the behaviour before shared stores). */
class FolderGoalRepo implements GoalRepo {
  readonly kind = "folder" as const;
  constructor(private readonly localDir: string) {}

  async create(source: string, goalId: string) {
    const path = goalWorkspace(this.localDir, goalId);
    return { revision: await createGoalWorkspace(source, path, goalId), path };
  }

  async health(goalId: string, recorded: string): Promise<WorkspaceHealth> {
    const ws = await workspaceHealth(goalWorkspace(this.localDir, goalId));
    if (ws.revision && ws.revision !== recorded)
      ws.problems.push({
        code: "workspace_revision_moved",
        detail: `the goal workspace is at ${ws.revision.slice(0, 12)}, but the goal records revision ${recorded.slice(0, 12)}; a commit was made outside loopgate`,
      });
    return ws;
  }

  tree(goalId: string, revision: string) {
    return revisionTree(this.localDir, goalId, revision);
  }

  writeBack(req: RepoWriteback) {
    return writeBack({ ...req, workspace: goalWorkspace(this.localDir, req.goalId) });
  }

  readbackWriteback(goalId: string, turnKey: string, base: string): Promise<Readback> {
    return readbackWriteback(goalWorkspace(this.localDir, goalId), turnKey, base);
  }

  async finishReadback(goalId: string, base: string, commit: string): Promise<string | null> {
    const sync = await syncWorkTree(goalWorkspace(this.localDir, goalId), base, commit);
    if (sync.cleared.length === 0 && sync.kind === "already") return null;
    return `work tree ${sync.kind === "left" ? `left: ${sync.reason}` : sync.kind}${sync.cleared.length ? `; removed stale ${sync.cleared.join(", ")}` : ""}`;
  }

  async saveEffect(id: TurnIdentity, data: unknown) {
    return saveTurnEffect(this.localDir, id, data);
  }

  async loadEffect<T>(id: TurnIdentity) {
    return loadTurnEffect<T>(this.localDir, id);
  }
}

/** The key of a record in the shared store's content (a namespaced sha256, as content keys are; exported for the tests that forge one). */
export const recordKey = (...parts: string[]) =>
  createHash("sha256")
    .update(`loopgate-goal-repo\0${parts.join("\0")}`)
    .digest("hex");

interface CommitRecord {
  kind: "loopgate_goal_commit";
  goal_id: string;
  commit: string;
  parent: string | null;
  pack: string;
}

interface WritebackRecord {
  kind: "loopgate_goal_writeback";
  goal_id: string;
  turn_key: string;
  commit: string;
  parent: string;
}

/**
 * Kill-point fault injection for the crash tests, like LOOPGATE_FAULT_KILL_AFTER_GOAL_EVENTS:
 * LOOPGATE_FAULT_KILL_AT_GOAL_UPLOAD=before kills the process (SIGKILL) after the writeback commit was
 * made in the local cache and before any of it is uploaded; `after`, once the turn record is stored and
 * before the goal stream records the writeback.
 */
function uploadFault(at: "before" | "after"): void {
  if (process.env.LOOPGATE_FAULT_KILL_AT_GOAL_UPLOAD === at) process.kill(process.pid, "SIGKILL");
}

/** git with bytes in and out (packs). */
function gitBytes(cwd: string, args: string[], input?: Buffer): Promise<Buffer> {
  noteGitProcess(args);
  return new Promise((resolve, reject) => {
    const child = execFile(
      "git",
      args,
      {
        cwd,
        encoding: "buffer",
        maxBuffer: 1024 * 1024 * 1024,
        env: {
          PATH: "/usr/bin:/bin",
          HOME: "/nonexistent",
          GIT_CONFIG_NOSYSTEM: "1",
          GIT_CONFIG_GLOBAL: "/dev/null",
          LC_ALL: "C",
        },
      },
      (err, stdout, stderr) =>
        err ? reject(new Error(`git ${args[0]}: ${String(stderr) || err.message}`)) : resolve(stdout),
    );
    child.stdin?.end(input ?? Buffer.alloc(0));
  });
}

/** A shared store: the repository of record is the store's packs and records; this host keeps a cache. */
class SharedGoalRepo implements GoalRepo {
  readonly kind = "shared" as const;
  constructor(
    private readonly content: ContentStore,
    private readonly localDir: string,
  ) {}

  private cache(goalId: string): string {
    return goalWorkspace(this.localDir, goalId);
  }

  private async record<T>(key: string): Promise<T | null> {
    try {
      return JSON.parse(await this.content.getObservation(key)) as T;
    } catch (e) {
      if (e instanceof ContentMissingError) return null;
      throw e;
    }
  }

  /** The cache repository of the goal on this host, created empty when absent. */
  private async cacheRepo(goalId: string): Promise<string> {
    const ws = this.cache(goalId);
    if (!existsSync(join(ws, ".git"))) {
      mkdirSync(ws, { recursive: true });
      await git(ws, ["init", "-q", "-b", "main"]);
    }
    return ws;
  }

  private async has(ws: string, commit: string): Promise<boolean> {
    return git(ws, ["cat-file", "-e", `${commit}^{commit}`]).then(
      () => true,
      () => false,
    );
  }

  /** Makes the cache hold `revision` and its history, from the store's packs (oldest first). */
  async ensure(goalId: string, revision: string): Promise<string> {
    if (!/^[0-9a-f]{40,64}$/.test(revision))
      throw new InfrastructureError(`goal ${goalId}: not a revision: ${JSON.stringify(revision)}`);
    const ws = await this.cacheRepo(goalId);
    const chain: CommitRecord[] = [];
    for (let at: string | null = revision; at !== null && !(await this.has(ws, at)); ) {
      const rec: CommitRecord | null = await this.record<CommitRecord>(recordKey("commit", goalId, at));
      if (!rec)
        throw new InfrastructureError(
          `revision ${at.slice(0, 12)} of goal ${goalId} is not in the store (no commit record); the goal's repository is incomplete`,
        );
      chain.push(rec);
      at = rec.parent;
    }
    for (const rec of chain.reverse())
      await gitBytes(ws, ["unpack-objects", "-q"], await this.content.getBlob(rec.pack));
    if (chain.length > 0 && !(await this.has(ws, revision)))
      throw new InfrastructureError(
        `the store's packs of goal ${goalId} do not hold ${revision.slice(0, 12)}`,
      );
    return ws;
  }

  /** Uploads the objects `commit` adds to `parent` (a pack), then its commit record: the objects first. */
  private async upload(goalId: string, ws: string, commit: string, parent: string | null): Promise<void> {
    const revs = `${commit}\n${parent ? `^${parent}\n` : ""}`;
    const pack = await gitBytes(ws, ["pack-objects", "--stdout", "--revs", "-q"], Buffer.from(revs));
    const hash = contentHash(pack);
    await this.content.putBlob(hash, pack);
    const rec: CommitRecord = { kind: "loopgate_goal_commit", goal_id: goalId, commit, parent, pack: hash };
    await this.content.putObservation(recordKey("commit", goalId, commit), JSON.stringify(rec));
  }

  async create(source: string, goalId: string) {
    const tmp = mkdtempSync(join(tmpdir(), "loopgate-goal-"));
    try {
      const ws = join(tmp, "workspace");
      const revision = await createGoalWorkspace(source, ws, goalId);
      await this.upload(goalId, ws, revision, null);
      return { revision, path: `store:goals/${goalId}` };
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }

  async health(goalId: string, recorded: string): Promise<WorkspaceHealth> {
    if (!recorded) return { revision: null, problems: [] };
    const rec = await this.record<CommitRecord>(recordKey("commit", goalId, recorded));
    if (!rec)
      return {
        revision: null,
        problems: [
          {
            code: "workspace_missing",
            detail: `the store holds no objects of revision ${recorded.slice(0, 12)} of goal ${goalId}`,
          },
        ],
      };
    return { revision: recorded, problems: [] };
  }

  async tree(goalId: string, revision: string) {
    await this.ensure(goalId, revision);
    return revisionTree(this.localDir, goalId, revision);
  }

  async writeBack(req: RepoWriteback): Promise<WritebackOutcome> {
    if (req.base !== req.recorded) return { kind: "cas_conflict", currentRevision: req.recorded };
    const ws = await this.ensure(req.goalId, req.base);
    // The cache's branch is only a cache: set it to the base (a local commit never uploaded is dropped).
    await git(ws, ["update-ref", "refs/heads/main", req.base]);
    const outcome = await writeBack({ ...req, workspace: ws, workTree: false });
    if (outcome.kind !== "accepted") return outcome;
    uploadFault("before");
    await this.upload(req.goalId, ws, outcome.commit, req.base);
    const rec: WritebackRecord = {
      kind: "loopgate_goal_writeback",
      goal_id: req.goalId,
      turn_key: req.turnKey,
      commit: outcome.commit,
      parent: req.base,
    };
    // The turn record last: once it is held, readback finds the commit (and every object of it).
    await this.content.putObservation(recordKey("writeback", req.goalId, req.turnKey), JSON.stringify(rec));
    uploadFault("after");
    return outcome;
  }

  async readbackWriteback(goalId: string, turnKey: string, base: string): Promise<Readback> {
    let rec: WritebackRecord | null;
    try {
      rec = await this.record<WritebackRecord>(recordKey("writeback", goalId, turnKey));
    } catch (e) {
      return { found: "unknown", reason: `reading the store's writeback of ${turnKey} failed: ${String(e)}` };
    }
    if (!rec) return { found: "absent" };
    try {
      const ws = await this.ensure(goalId, rec.commit);
      // The commit itself must carry the turn's trailer on the turn's base (the record alone is not enough).
      const out = await git(ws, [
        "show",
        "-s",
        `--format=%P%x09%(trailers:key=${TURN_TRAILER},valueonly,separator=%x1f)`,
        rec.commit,
      ]);
      const [parents = "", trailers = ""] = out.trim().split("\t");
      const values = trailers.split("\x1f").map((v) => v.trim());
      if (!values.includes(turnKey) || parents.trim() !== base)
        return {
          found: "unknown",
          reason: `the store's writeback of ${turnKey} names commit ${rec.commit.slice(0, 12)}, which does not carry the turn's trailer on its base ${base.slice(0, 12)}`,
        };
    } catch (e) {
      return { found: "unknown", reason: `the store's writeback of ${turnKey}: ${(e as Error).message}` };
    }
    return {
      found: "committed",
      payload: { phase: "durable_writeback", commit: rec.commit, newRevision: rec.commit },
    };
  }

  /** The cache has no work tree to finish: every read goes through the store's objects. */
  async finishReadback(): Promise<string | null> {
    return null;
  }

  async saveEffect(id: TurnIdentity, data: unknown) {
    await this.content.putObservation(
      recordKey("effect", id.goal_id, turnEffectName(id)),
      JSON.stringify(data),
    );
    return `effect:${turnEffectName(id)}`;
  }

  async loadEffect<T>(id: TurnIdentity) {
    return this.record<T>(recordKey("effect", id.goal_id, turnEffectName(id)));
  }
}
