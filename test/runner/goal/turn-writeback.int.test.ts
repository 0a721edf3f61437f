import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { ObservedEntry } from "../../../src/core/observation/observation.js";
import type { AcceptedChange } from "../../../src/runner/goal/repo/deliverables.js";
import { createGoalWorkspace } from "../../../src/runner/goal/repo/goal-workspace.js";
import { readbackWriteback } from "../../../src/runner/goal/repo/readback.js";
import { syncWorkTree, writeBack } from "../../../src/runner/goal/repo/writeback.js";

// Writeback and readback of a governed turn on a real git repository (the goal workspace).
const temps: string[] = [];
const temp = () => {
  const d = mkdtempSync(join(tmpdir(), "loopgate-turn-wb-"));
  temps.push(d);
  return d;
};
afterAll(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

const KEY = "g1/agent-a/t1";
const git = (ws: string, ...args: string[]) =>
  execFileSync("git", args, {
    cwd: ws,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@t",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@t",
    },
  }).trim();

/** A goal workspace with a.txt and old.txt; returns it and its first revision. */
async function workspace(): Promise<{ ws: string; base: string }> {
  const src = temp();
  writeFileSync(join(src, "a.txt"), "alpha\n");
  writeFileSync(join(src, "old.txt"), "to be removed\n");
  const ws = join(temp(), "workspace");
  const base = await createGoalWorkspace(src, ws, "g1");
  return { ws, base };
}

/** A run's accepted change as the run stores it: files by sha256 in a blob folder. */
function change(files: Record<string, string>, drop: string[] = []): AcceptedChange {
  const blobs = temp();
  const carry: ObservedEntry[] = Object.entries(files).map(([path, content]) => {
    const hash = createHash("sha256").update(content).digest("hex");
    mkdirSync(join(blobs, hash.slice(0, 2)), { recursive: true });
    writeFileSync(join(blobs, hash.slice(0, 2), hash), content);
    return { path, type: "file", mode: path.endsWith(".sh") ? 0o755 : 0o644, size: content.length, hash };
  });
  return { carry, drop, blobPath: (h) => join(blobs, h.slice(0, 2), h) };
}

describe("durable writeback", () => {
  it("commits the accepted change on the base as one commit with the turn trailer, and moves the work tree", async () => {
    const { ws, base } = await workspace();
    const out = await writeBack({
      workspace: ws,
      base,
      change: change({ "a.txt": "ALPHA\n", "bin/run.sh": "#!/bin/sh\n" }, ["old.txt"]),
      turnKey: KEY,
      subject: "loopgate: todo_x",
    });
    expect(out.kind).toBe("accepted");
    if (out.kind !== "accepted") return;
    expect(git(ws, "rev-parse", "HEAD")).toBe(out.commit);
    expect(git(ws, "rev-parse", "HEAD^")).toBe(base);
    expect(git(ws, "log", "-1", "--format=%(trailers:key=Loopgate-Turn,valueonly)")).toBe(KEY);
    expect(git(ws, "ls-tree", "-r", "--name-only", "HEAD").split("\n").sort()).toEqual([
      "a.txt",
      "bin/run.sh",
    ]);
    expect(git(ws, "ls-tree", "HEAD", "bin/run.sh")).toMatch(/^100755 /);
    expect(readFileSync(join(ws, "a.txt"), "utf8")).toBe("ALPHA\n");
    expect(git(ws, "status", "--porcelain")).toBe("");
    expect(await readbackWriteback(ws, KEY, base)).toEqual({
      found: "committed",
      payload: { phase: "durable_writeback", commit: out.commit, newRevision: out.commit },
    });
  });

  it("a moved revision is a cas_conflict (needs_rebase): nothing is committed, nothing forced", async () => {
    const { ws, base } = await workspace();
    writeFileSync(join(ws, "b.txt"), "someone else\n");
    git(ws, "add", "b.txt");
    git(ws, "commit", "-q", "-m", "another change");
    const moved = git(ws, "rev-parse", "HEAD");
    const out = await writeBack({
      workspace: ws,
      base,
      change: change({ "a.txt": "X\n" }),
      turnKey: KEY,
      subject: "s",
    });
    expect(out).toEqual({ kind: "cas_conflict", currentRevision: moved });
    expect(git(ws, "rev-parse", "HEAD")).toBe(moved);
    expect(readFileSync(join(ws, "a.txt"), "utf8")).toBe("alpha\n");
    expect(await readbackWriteback(ws, KEY, base)).toEqual({ found: "absent" });
  });
});

describe("writeback readback by the turn trailer", () => {
  it("absent when no commit carries the trailer; another turn's (a prefix of it) is not it", async () => {
    const { ws, base } = await workspace();
    await writeBack({
      workspace: ws,
      base,
      change: change({ "a.txt": "1\n" }),
      turnKey: `${KEY}0`,
      subject: "t10",
    });
    expect(await readbackWriteback(ws, KEY, git(ws, "rev-parse", "HEAD"))).toEqual({ found: "absent" });
  });

  it("two commits with the same trailer are ambiguous: unknown, which fails closed", async () => {
    const { ws, base } = await workspace();
    const first = await writeBack({
      workspace: ws,
      base,
      change: change({ "a.txt": "1\n" }),
      turnKey: KEY,
      subject: "one",
    });
    expect(first.kind).toBe("accepted");
    // A forged second commit carrying the same turn identity.
    writeFileSync(join(ws, "a.txt"), "2\n");
    git(ws, "commit", "-q", "-am", "two", "-m", `Loopgate-Turn: ${KEY}`);
    const rb = await readbackWriteback(ws, KEY, base);
    expect(rb.found).toBe("unknown");
    if (rb.found === "unknown") expect(rb.reason).toMatch(/2 commits carry Loopgate-Turn: g1\/agent-a\/t1/);
  });

  it("a trailer commit on another base is unknown, and a failing lookup is unknown", async () => {
    const { ws, base } = await workspace();
    const out = await writeBack({
      workspace: ws,
      base,
      change: change({ "a.txt": "1\n" }),
      turnKey: KEY,
      subject: "one",
    });
    expect(out.kind).toBe("accepted");
    const rb = await readbackWriteback(ws, KEY, "f".repeat(40));
    expect(rb.found).toBe("unknown");
    const gone = await readbackWriteback(join(temp(), "no-repo"), KEY, base);
    expect(gone.found).toBe("unknown");
  });
});

// A turn SIGKILLed inside the writeback leaves the goal workspace as git left it: stale lock files, the
// branch moved but the index and files still at the base, or a checkout half done. The next turn's
// readback must finish the move (and never overwrite an edit it cannot explain).
describe("work tree sync after a crash", () => {
  /** A workspace whose branch moved to the turn's commit while its index and files stay at the base. */
  async function movedBranch(): Promise<{ ws: string; base: string; commit: string }> {
    const { ws, base } = await workspace();
    const out = await writeBack({
      workspace: ws,
      base,
      change: change({ "a.txt": "ALPHA\n", "bin/new.sh": "#!/bin/sh\necho new\n" }, ["old.txt"]),
      turnKey: KEY,
      subject: "s",
    });
    if (out.kind !== "accepted") throw new Error(`writeback: ${JSON.stringify(out)}`);
    // Undo the sync by hand, keeping HEAD: index and files back at the base, as before the sync ran.
    git(ws, "read-tree", "--reset", "-u", base);
    rmSync(join(ws, "bin"), { recursive: true, force: true });
    return { ws, base, commit: out.commit };
  }
  const atCommit = (ws: string) => {
    expect(readFileSync(join(ws, "a.txt"), "utf8")).toBe("ALPHA\n");
    expect(readFileSync(join(ws, "bin/new.sh"), "utf8")).toBe("#!/bin/sh\necho new\n");
    expect(() => readFileSync(join(ws, "old.txt"))).toThrow();
    expect(git(ws, "status", "--porcelain", "--untracked-files=all")).toBe("");
  };

  it("killed after the ref moved, with git's index.lock left behind: the locks go and the move finishes", async () => {
    const { ws, base, commit } = await movedBranch();
    // The state the campaign's kill left: HEAD at the commit, the index at the base, index.lock present.
    expect(git(ws, "status", "--porcelain")).toMatch(/a\.txt/);
    writeFileSync(join(ws, ".git", "index.lock"), "");
    expect(() => git(ws, "write-tree")).toThrow(/index\.lock/);
    const sync = await syncWorkTree(ws, base, commit);
    expect(sync).toEqual({ kind: "synced", cleared: ["index.lock"] });
    atCommit(ws);
    expect(existsSync(join(ws, ".git", "index.lock"))).toBe(false);
    // Idempotent: a second call finds nothing to do.
    expect(await syncWorkTree(ws, base, commit)).toEqual({ kind: "already", cleared: [] });
  });

  it("a checkout killed half way (some files at the commit, the rest at the base) is finished", async () => {
    const { ws, base, commit } = await movedBranch();
    writeFileSync(join(ws, "a.txt"), "ALPHA\n"); // already the commit's
    mkdirSync(join(ws, "bin"));
    writeFileSync(join(ws, "bin/new.sh"), "#!/bin/sh\necho new\n"); // written, not yet in the index
    // old.txt still the base's.
    expect(await syncWorkTree(ws, base, commit)).toEqual({ kind: "synced", cleared: [] });
    atCommit(ws);
  });

  it("never overwrites an edit it cannot explain: a file unlike both revisions, or one the commit did not touch", async () => {
    const { ws, base, commit } = await movedBranch();
    writeFileSync(join(ws, "a.txt"), "hand edit\n");
    const left = await syncWorkTree(ws, base, commit);
    expect(left.kind).toBe("left");
    if (left.kind === "left") expect(left.reason).toMatch(/a\.txt differs from both/);
    expect(readFileSync(join(ws, "a.txt"), "utf8")).toBe("hand edit\n");

    const other = await movedBranch();
    writeFileSync(join(other.ws, "notes.txt"), "mine\n");
    const left2 = await syncWorkTree(other.ws, other.base, other.commit);
    expect(left2.kind).toBe("left");
    if (left2.kind === "left")
      expect(left2.reason).toMatch(/notes\.txt was changed in the workspace by hand/);
    expect(readFileSync(join(other.ws, "notes.txt"), "utf8")).toBe("mine\n");
    expect(readFileSync(join(other.ws, "a.txt"), "utf8")).toBe("alpha\n");
  });

  it("a branch moved elsewhere is not synced to", async () => {
    const { ws, base, commit } = await movedBranch();
    const left = await syncWorkTree(ws, commit, base);
    expect(left.kind).toBe("left");
    if (left.kind === "left") expect(left.reason).toMatch(/the branch is at/);
  });

  it("a writeback after a crash that left the index and branch locks commits as usual", async () => {
    const { ws, base } = await workspace();
    writeFileSync(join(ws, ".git", "index.lock"), "");
    writeFileSync(join(ws, ".git", "refs", "heads", "main.lock"), "");
    const out = await writeBack({
      workspace: ws,
      base,
      change: change({ "a.txt": "ALPHA\n" }),
      turnKey: KEY,
      subject: "s",
    });
    expect(out.kind).toBe("accepted");
    expect(git(ws, "log", "-1", "--format=%(trailers:key=Loopgate-Turn,valueonly)")).toBe(KEY);
    expect(git(ws, "status", "--porcelain")).toBe("");
  });
});
