import { createHash } from "node:crypto";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MonitorSpec } from "../../../src/core/events/goal/goal-events.js";
import { pollMonitor } from "../../../src/runner/goal/monitor-poll.js";

// pollMonitor on real bubblewrap: the poll's stdout is the observation; a test changes what it polls.

let tree: string;
beforeAll(async () => {
  tree = await mkdtemp(join(tmpdir(), "lg-poll-"));
});
afterAll(async () => {
  await rm(tree, { recursive: true, force: true });
});

const spec = (argv: string[], timeout_seconds = 20): MonitorSpec => ({
  argv,
  cadence_seconds: 60,
  timeout_seconds,
  max_no_change_before_replan: 3,
});
const sha = (s: string) => `sha256:${createHash("sha256").update(s, "utf8").digest("hex")}`;
const opts = { sandbox: "bubblewrap" as const };

describe("pollMonitor in bubblewrap", () => {
  it("hashes the poll's stdout; a changed source changes the hash, whitespace at line ends does not", async () => {
    await writeFile(join(tree, "reports.txt"), "report 1\n");
    const a = await pollMonitor(spec(["cat", "reports.txt"]), tree, opts);
    expect(a).toMatchObject({ ok: true, exit_code: 0, result_hash: sha("report 1") });
    await writeFile(join(tree, "reports.txt"), "report 1  \r\n\n");
    const same = await pollMonitor(spec(["cat", "reports.txt"]), tree, opts);
    expect(same.ok && same.result_hash).toBe(sha("report 1"));
    await writeFile(join(tree, "reports.txt"), "report 1\nreport 2\n");
    const b = await pollMonitor(spec(["cat", "reports.txt"]), tree, opts);
    expect(b).toMatchObject({ ok: true, result_hash: sha("report 1\nreport 2") });
    expect(b.ok && b.output_excerpt).toContain("report 2");
  });
  it("a timeout is a typed failure, not an observation", async () => {
    const r = await pollMonitor(spec(["sleep", "30"], 1), tree, opts);
    expect(r).toMatchObject({ ok: false, failure: "timeout" });
    expect("result_hash" in r).toBe(false);
  });
  it("a non-zero exit is a typed failure with its exit code, whatever it printed", async () => {
    const r = await pollMonitor(spec(["sh", "-c", "echo changed; exit 3"]), tree, opts);
    expect(r).toMatchObject({ ok: false, failure: "exit_nonzero", exit_code: 3 });
  });
  it("sees the tree read-only and none of the caller's environment", async () => {
    process.env.LG_POLL_SECRET = "do-not-leak";
    try {
      const w = await pollMonitor(spec(["sh", "-c", "echo x > written.txt"]), tree, opts);
      expect(w).toMatchObject({ ok: false, failure: "exit_nonzero" });
      const e = await pollMonitor(spec(["sh", "-c", 'echo "[$LG_POLL_SECRET]"']), tree, opts);
      expect(e).toMatchObject({ ok: true, result_hash: sha("[]") });
    } finally {
      delete process.env.LG_POLL_SECRET;
    }
  });
  it("a program that is not there is a spawn or exit failure, never a hash", async () => {
    const r = await pollMonitor(spec(["no-such-poll-program"]), tree, opts);
    expect(r.ok).toBe(false);
  });

  it("resolves its argv against the goal file's folder: a script beside the goal file runs and is hashed", async () => {
    // A goal folder with the monitor's script and what it reads, the store beside the goal file (as
    // `goal new` puts it by default) and the turn's revision tree inside that store.
    const goalDir = join(tree, "goal");
    const store = join(goalDir, ".loopgate");
    const rev = join(store, "goals", "g", "revisions", "abc");
    await mkdir(join(goalDir, "monitor"), { recursive: true });
    await mkdir(rev, { recursive: true });
    await writeFile(join(goalDir, "monitor", "reports.sh"), 'cat "$(dirname "$0")/reports.txt"\n');
    await writeFile(join(goalDir, "monitor", "reports.txt"), "report A\n");
    await writeFile(join(store, "events.db"), "secret store\n");
    await writeFile(join(rev, "VERSION"), "v1\n");
    const at = { ...opts, goalDir, masked: [store] };
    const a = await pollMonitor(spec(["sh", "monitor/reports.sh"]), rev, at);
    expect(a).toMatchObject({ ok: true, result_hash: sha("report A") });
    await writeFile(join(goalDir, "monitor", "reports.txt"), "report A\nreport B\n");
    const b = await pollMonitor(spec(["sh", "monitor/reports.sh"]), rev, at);
    expect(b).toMatchObject({ ok: true, result_hash: sha("report A\nreport B") });
    // The turn's revision is there, read-only, as $LOOPGATE_GOAL_WORKSPACE; the store around it is not.
    const ws = await pollMonitor(spec(["sh", "-c", 'cat "$LOOPGATE_GOAL_WORKSPACE/VERSION"']), rev, at);
    expect(ws).toMatchObject({ ok: true, result_hash: sha("v1") });
    const hidden = await pollMonitor(spec(["cat", ".loopgate/events.db"]), rev, at);
    expect(hidden.ok).toBe(false);
    const ro = await pollMonitor(spec(["sh", "-c", "echo x > monitor/reports.txt"]), rev, at);
    expect(ro).toMatchObject({ ok: false, failure: "exit_nonzero" });
    // Without the goal folder the same argv has nothing to run: a typed failure, never a hash.
    const bare = await pollMonitor(spec(["sh", "monitor/reports.sh"]), rev, opts);
    expect(bare.ok).toBe(false);
  });
  it("a goal folder that is gone is a typed spawn failure naming it", async () => {
    const gone = join(tree, "no-such-goal-folder");
    const r = await pollMonitor(spec(["sh", "monitor/reports.sh"]), tree, { ...opts, goalDir: gone });
    expect(r).toMatchObject({ ok: false, failure: "spawn_failed" });
    expect(r.ok === false && r.detail).toContain(gone);
  });
});
