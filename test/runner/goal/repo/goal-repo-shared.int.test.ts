// The shared goal repository (a PostgreSQL store's content): revisions as packs and records, the
// writeback uploaded then found by readback from the store alone, from any host folder; a commit made
// only in a host's cache is absent; a record that does not match its commit's trailer is unknown.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { goalRepo, recordKey } from "../../../../src/runner/goal/repo/goal-repo.js";
import { PostgresEventStore } from "../../../../src/store/postgres/postgres-event-store.js";
import { type FreshDatabase, freshDatabase, freshSchema } from "../../../support/postgres.js";

let db: FreshDatabase;
let store: PostgresEventStore;
const temps: string[] = [];
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), "loopgate-repo-"));
  temps.push(d);
  return d;
};
beforeAll(async () => {
  db = await freshDatabase();
  store = await PostgresEventStore.open(db.url, { pgSchema: freshSchema() });
}, 60_000);
afterAll(async () => {
  for (const t of temps) rmSync(t, { recursive: true, force: true });
  await store?.close();
  await db?.drop();
});

let n = 0;
/** A goal whose workspace holds two files, created in the store; returns its id and first revision. */
async function created() {
  const src = temp();
  writeFileSync(join(src, "keep.txt"), "keep\n");
  writeFileSync(join(src, "drop.txt"), "drop\n");
  const goalId = `g${++n}`;
  const { revision, path } = await goalRepo(store, temp()).create(src, goalId);
  expect(path).toBe(`store:goals/${goalId}`);
  return { goalId, revision };
}

const dropChange = { carry: [], drop: ["drop.txt"], blobPath: () => "" };
const gitIn = (host: string, goalId: string, ...args: string[]) =>
  execFileSync("git", args, { cwd: join(host, "goals", goalId, "workspace"), encoding: "utf8" }).trim();

describe("the shared goal repository", () => {
  it("a created revision is in the store: its tree can be read on any host; an unknown one is missing", async () => {
    const { goalId, revision } = await created();
    const tree = await goalRepo(store, temp()).tree(goalId, revision);
    expect(execFileSync("ls", [tree], { encoding: "utf8" }).split("\n").filter(Boolean).sort()).toEqual([
      "drop.txt",
      "keep.txt",
    ]);
    expect((await goalRepo(store, temp()).health(goalId, revision)).problems).toEqual([]);
    const other = "1".repeat(40);
    const h = await goalRepo(store, temp()).health(goalId, other);
    expect(h.problems.map((p) => p.code)).toEqual(["workspace_missing"]);
    await expect(goalRepo(store, temp()).tree(goalId, other)).rejects.toThrow(
      /revision 111111111111 of goal g\d+ is not in the store/,
    );
  });

  it("a writeback is uploaded: another host's readback finds it committed, with its objects", async () => {
    const { goalId, revision } = await created();
    const key = `${goalId}/agent/t1`;
    const out = await goalRepo(store, temp()).writeBack({
      goalId,
      base: revision,
      recorded: revision,
      change: dropChange,
      turnKey: key,
      subject: "drop",
    });
    expect(out.kind).toBe("accepted");
    const commit = out.kind === "accepted" ? out.commit : "";
    const hostB = temp();
    expect(await goalRepo(store, hostB).readbackWriteback(goalId, key, revision)).toEqual({
      found: "committed",
      payload: { phase: "durable_writeback", commit, newRevision: commit },
    });
    // Host B now holds the commit itself (from the store's pack), with the turn's trailer on the base.
    expect(
      gitIn(hostB, goalId, "log", "-1", "--format=%P %(trailers:key=Loopgate-Turn,valueonly)", commit),
    ).toBe(`${revision} ${key}`);
    expect(gitIn(hostB, goalId, "ls-tree", "--name-only", commit)).toBe("keep.txt");
    expect(await goalRepo(store, temp()).readbackWriteback(goalId, `${goalId}/agent/t2`, revision)).toEqual({
      found: "absent",
    });
  });

  it("a stale base is cas_conflict and uploads nothing (readback stays absent)", async () => {
    const { goalId, revision } = await created();
    const key = `${goalId}/agent/t1`;
    const moved = "2".repeat(40);
    const out = await goalRepo(store, temp()).writeBack({
      goalId,
      base: revision,
      recorded: moved,
      change: dropChange,
      turnKey: key,
      subject: "drop",
    });
    expect(out).toEqual({ kind: "cas_conflict", currentRevision: moved });
    expect(await goalRepo(store, temp()).readbackWriteback(goalId, key, revision)).toEqual({
      found: "absent",
    });
  });

  it("a commit made only in a host's cache (never uploaded) is absent, even on that host", async () => {
    const { goalId, revision } = await created();
    const hostA = temp();
    await goalRepo(store, hostA).tree(goalId, revision);
    const key = `${goalId}/agent/t1`;
    const env = {
      ...process.env,
      GIT_AUTHOR_NAME: "x",
      GIT_AUTHOR_EMAIL: "x@x",
      GIT_COMMITTER_NAME: "x",
      GIT_COMMITTER_EMAIL: "x@x",
    };
    const tree = gitIn(hostA, goalId, "rev-parse", `${revision}^{tree}`);
    const local = execFileSync(
      "git",
      ["commit-tree", tree, "-p", revision, "-m", "local", "-m", `Loopgate-Turn: ${key}`],
      { cwd: join(hostA, "goals", goalId, "workspace"), encoding: "utf8", env },
    ).trim();
    gitIn(hostA, goalId, "update-ref", "refs/heads/main", local);
    expect(await goalRepo(store, hostA).readbackWriteback(goalId, key, revision)).toEqual({
      found: "absent",
    });
    // The writeback done again from that host is accepted on the base, not on the local commit.
    const out = await goalRepo(store, hostA).writeBack({
      goalId,
      base: revision,
      recorded: revision,
      change: dropChange,
      turnKey: key,
      subject: "again",
    });
    expect(out.kind).toBe("accepted");
    const again = out.kind === "accepted" ? out.commit : "";
    expect(again).not.toBe(local);
    expect(gitIn(hostA, goalId, "rev-parse", `${again}^`)).toBe(revision);
  });

  it("a store record whose commit does not carry the turn's trailer is unknown (fail closed), never committed", async () => {
    const { goalId, revision } = await created();
    const out = await goalRepo(store, temp()).writeBack({
      goalId,
      base: revision,
      recorded: revision,
      change: dropChange,
      turnKey: `${goalId}/agent/t1`,
      subject: "drop",
    });
    const commit = out.kind === "accepted" ? out.commit : "";
    const forged = `${goalId}/agent/t9`;
    await store.content().putObservation(
      recordKey("writeback", goalId, forged),
      JSON.stringify({
        kind: "loopgate_goal_writeback",
        goal_id: goalId,
        turn_key: forged,
        commit,
        parent: revision,
      }),
    );
    const rb = await goalRepo(store, temp()).readbackWriteback(goalId, forged, revision);
    expect(rb.found).toBe("unknown");
    expect(rb.found === "unknown" ? rb.reason : "").toMatch(/does not carry the turn's trailer/);
  });

  it("kept turn effects are in the store: saved on one host, read on another; none kept is null", async () => {
    const id = { goal_id: "g-effects", agent_id: "a", turn_instance_id: "t1" };
    const ref = await goalRepo(store, temp()).saveEffect(id, { poll: { ok: true, result_hash: "abc" } });
    expect(ref).toMatch(/^effect:t1-[0-9a-f]{16}\.json$/);
    expect(await goalRepo(store, temp()).loadEffect(id)).toEqual({ poll: { ok: true, result_hash: "abc" } });
    expect(await goalRepo(store, temp()).loadEffect({ ...id, turn_instance_id: "t2" })).toBeNull();
  });
});
