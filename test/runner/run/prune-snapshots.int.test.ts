// `loopgate gc` removes the overlay workspaces' pristine snapshots (`<store>/snapshots/<key>/<id>/`) no run
// folder uses any more, keeps the current one of each key, and waits out a grace period after `current`
// changed. No mounts: the snapshots and the runs' overlay.json records are fabricated as files.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { noopBuilder } from "../../../src/builders/command-builder.js";
import { gcCommand } from "../../../src/cli/commands/gc.js";
import type { CommandIO } from "../../../src/cli/output/io.js";
import {
  pruneSnapshots,
  SNAPSHOT_COPY_GRACE_MS,
  SNAPSHOT_GRACE_MS,
} from "../../../src/runner/run/context/prune-snapshots.js";
import { pruneRuns } from "../../../src/runner/run/prune-runs.js";
import { runTask } from "../../../src/runner/run/run-task.js";
import { loadTask } from "../../../src/runner/task-source/load-task.js";
import { SqliteEventStore } from "../../../src/store/sqlite/sqlite-event-store.js";
import { makeTask } from "../task-fixture.js";

const KEY = "0123456789abcdef0123456789abcdef";
const OTHER_KEY = "fedcba9876543210fedcba9876543210";
const temps: string[] = [];
afterAll(async () => {
  for (const t of temps) await rm(t, { recursive: true, force: true });
});
const tempDir = async (prefix = "loopgate-snapshots-") => {
  const d = await mkdtemp(join(tmpdir(), prefix));
  temps.push(d);
  return d;
};

const snapDir = (store: string, id: string, key = KEY) => join(store, "snapshots", key, id);
/** A finished snapshot as makeSnapshot leaves it: tree/, stamp, <observation-id>.json. */
function snapshot(store: string, id: string, key = KEY): string {
  const dir = snapDir(store, id, key);
  mkdirSync(join(dir, "tree", "lib", "deep"), { recursive: true });
  writeFileSync(join(dir, "tree", "lib", "a.txt"), `${id}\n`.repeat(2000));
  writeFileSync(join(dir, "tree", "lib", "deep", "b.txt"), "b\n");
  writeFileSync(join(dir, "stamp"), "");
  writeFileSync(join(dir, `${"ab".repeat(32)}.json`), "{}");
  return dir;
}
function setCurrent(store: string, id: string, key = KEY): string {
  const file = join(store, "snapshots", key, "current");
  writeFileSync(file, id);
  return file;
}
/** A run folder (known to a log or not) whose overlay has `lower` as its lower layer. */
function overlayRun(store: string, run: string, lower: string): void {
  mkdirSync(join(store, "runs", run, "upper"), { recursive: true });
  writeFileSync(
    join(store, "runs", run, "overlay.json"),
    JSON.stringify({ lower, pristine_id: "cd".repeat(32) }),
  );
}
/** Disk usage as du counts it, measured here rather than by loopgate. */
const du = (dir: string) =>
  Number(execFileSync("du", ["-s", "-B1", dir], { encoding: "utf8" }).split("\t")[0]);

/** Files cannot be made to look old (ctime is never set back): time moves forward instead. */
const later = (ms = 2 * SNAPSHOT_GRACE_MS) => new Date(Date.now() + ms);

/** Sets `path`'s times to a minute before `now` (its ctime stays the real one, long before `now`); returns that time. */
function touchMinuteBefore(path: string, now: Date): Date {
  const justNow = new Date(now.getTime() - 60_000);
  utimesSync(path, justNow, justNow);
  return justNow;
}

describe("pruneSnapshots", () => {
  it("removes an old snapshot no run uses, reporting its bytes; keeps the current one and the ones runs use", async () => {
    const store = await tempDir();
    const unused = snapshot(store, "m1-aaaa");
    const used = snapshot(store, "m2-bbbb");
    const viaLink = snapshot(store, "m3-cccc");
    const current = snapshot(store, "m4-dddd");
    setCurrent(store, "m4-dddd");
    // One run names its lower layer plainly, one through a symlink to the store: both are the snapshot.
    overlayRun(store, "run-known", join(used, "tree"));
    const link = join(await tempDir(), "store-link");
    symlinkSync(store, link);
    overlayRun(store, "not-in-any-log", join(link, "snapshots", KEY, "m3-cccc", "tree"));
    // A run on another store's snapshot protects nothing here.
    overlayRun(store, "run-elsewhere", "/somewhere/else/snapshots/x/tree");
    const bytes = du(unused);
    expect(bytes).toBeGreaterThan(8192);

    const r = await pruneSnapshots(store, later(), false);
    expect(r.removed).toEqual([{ snapshot: `${KEY}/m1-aaaa`, bytes }]);
    expect(r.left).toEqual([]);
    expect(existsSync(unused)).toBe(false);
    for (const d of [used, viaLink, current])
      expect(existsSync(join(d, "tree", "lib", "a.txt")), d).toBe(true);
    expect(readFileSync(join(store, "snapshots", KEY, "current"), "utf8")).toBe("m4-dddd");
  });

  it("a dry run removes nothing and reports what the real one then removes", async () => {
    const store = await tempDir();
    const a = snapshot(store, "m1-aaaa");
    const b = snapshot(store, "m2-bbbb", OTHER_KEY);
    snapshot(store, "m3-cccc");
    setCurrent(store, "m3-cccc");
    snapshot(store, "m4-dddd", OTHER_KEY);
    setCurrent(store, "m4-dddd", OTHER_KEY);
    const now = later();
    const dry = await pruneSnapshots(store, now, true);
    expect(dry.removed.map((x) => x.snapshot).sort()).toEqual(
      [`${KEY}/m1-aaaa`, `${OTHER_KEY}/m2-bbbb`].sort(),
    );
    expect(existsSync(a) && existsSync(b)).toBe(true);
    const real = await pruneSnapshots(store, now, false);
    expect(real).toEqual(dry);
    expect(existsSync(a) || existsSync(b)).toBe(false);
  });

  it("keeps every snapshot of a key while its current changed within the grace period", async () => {
    const store = await tempDir();
    const old = snapshot(store, "m1-aaaa");
    snapshot(store, "m2-bbbb");
    const file = setCurrent(store, "m2-bbbb");
    const now = later();
    const justNow = touchMinuteBefore(file, now);
    expect((await pruneSnapshots(store, now, false)).removed).toEqual([]);
    expect(existsSync(old)).toBe(true);
    // Once the grace has passed since then, it goes.
    const after = new Date(justNow.getTime() + SNAPSHOT_GRACE_MS);
    expect((await pruneSnapshots(store, after, false)).removed.map((x) => x.snapshot)).toEqual([
      `${KEY}/m1-aaaa`,
    ]);
  });

  it("keeps a snapshot renamed from its .tmp a moment ago whose current is not written yet", async () => {
    const store = await tempDir();
    snapshot(store, "m1-aaaa");
    setCurrent(store, "m1-aaaa");
    const fresh = snapshot(store, "m2-bbbb");
    const now = later();
    touchMinuteBefore(fresh, now);
    expect((await pruneSnapshots(store, now, false)).removed).toEqual([]);
    expect(existsSync(fresh)).toBe(true);
  });

  it("keeps every snapshot of a key without a current file, and all of them when an overlay.json cannot be read", async () => {
    const store = await tempDir();
    const orphan = snapshot(store, "m1-aaaa", OTHER_KEY); // no current for OTHER_KEY
    const old = snapshot(store, "m2-bbbb");
    snapshot(store, "m3-cccc");
    setCurrent(store, "m3-cccc");
    mkdirSync(join(store, "runs", "broken"), { recursive: true });
    writeFileSync(join(store, "runs", "broken", "overlay.json"), '{"lower": ');
    const r = await pruneSnapshots(store, later(), false);
    expect(r.removed).toEqual([]);
    expect(existsSync(old) && existsSync(orphan)).toBe(true);
    const why = Object.fromEntries(r.left.map((l) => [l.path, l.why]));
    expect(why[join(store, "snapshots", KEY)]).toContain(join(store, "runs", "broken", "overlay.json"));
    expect(why[join(store, "snapshots", OTHER_KEY)]).toContain("current is missing");
    // With the record mended (naming no snapshot here), the key with a current loses its old snapshot.
    writeFileSync(
      join(store, "runs", "broken", "overlay.json"),
      JSON.stringify({ lower: "/elsewhere/tree", pristine_id: "cd".repeat(32) }),
    );
    expect((await pruneSnapshots(store, later(), false)).removed.map((x) => x.snapshot)).toEqual([
      `${KEY}/m2-bbbb`,
    ]);
    expect(existsSync(orphan)).toBe(true);
  });

  it("removes a crashed copy (.tmp) and a stray current.<id> once past their grace, keeps fresh ones", async () => {
    const store = await tempDir();
    snapshot(store, "m1-aaaa");
    setCurrent(store, "m1-aaaa");
    const crashed = snapshot(store, "m2-bbbb.tmp");
    const underWay = snapshot(store, "m3-cccc.tmp");
    const strayOld = join(store, "snapshots", KEY, "current.m4-dddd");
    const strayNew = join(store, "snapshots", KEY, "current.m5-eeee");
    writeFileSync(strayOld, "m4-dddd");
    writeFileSync(strayNew, "m5-eeee");
    const now = later(SNAPSHOT_COPY_GRACE_MS + 3_600_000);
    const justNow = new Date(now.getTime() - 60_000);
    // A copy under way last wrote deep inside its tree a minute ago.
    utimesSync(join(underWay, "tree", "lib", "deep", "b.txt"), justNow, justNow);
    utimesSync(strayNew, justNow, justNow);
    const crashedBytes = du(crashed);
    const r = await pruneSnapshots(store, now, false);
    expect(r.removed.map((x) => x.snapshot).sort()).toEqual([`${KEY}/current.m4-dddd`, `${KEY}/m2-bbbb.tmp`]);
    expect(r.removed.find((x) => x.snapshot.endsWith(".tmp"))?.bytes).toBe(crashedBytes);
    expect(existsSync(crashed) || existsSync(strayOld)).toBe(false);
    expect(existsSync(underWay) && existsSync(strayNew)).toBe(true);
    expect(existsSync(snapDir(store, "m1-aaaa"))).toBe(true);
    // A crashed copy only SNAPSHOT_GRACE_MS old is not yet taken for crashed.
    const store2 = await tempDir();
    const recent = snapshot(store2, "m6-ffff.tmp");
    expect((await pruneSnapshots(store2, later(), false)).removed).toEqual([]);
    expect(existsSync(recent)).toBe(true);
  });

  it("leaves a symlinked snapshot folder alone and does not follow it", async () => {
    const store = await tempDir();
    snapshot(store, "m1-aaaa");
    setCurrent(store, "m1-aaaa");
    const outside = await tempDir("loopgate-outside-");
    writeFileSync(join(outside, "precious.txt"), "keep me");
    const link = join(store, "snapshots", KEY, "m2-bbbb");
    symlinkSync(outside, link);
    const r = await pruneSnapshots(store, later(), false);
    expect(r.removed).toEqual([]);
    expect(r.left.map((l) => l.path)).toEqual([link]);
    expect(readFileSync(join(link, "precious.txt"), "utf8")).toBe("keep me");
    expect(readFileSync(join(outside, "precious.txt"), "utf8")).toBe("keep me");
  });
});

describe("gc with workspace snapshots", () => {
  it("a run folder gc removes no longer keeps its snapshot; a kept run's does; freed bytes count it", async () => {
    const store = await tempDir();
    const log = SqliteEventStore.open(join(store, "events.db"));
    try {
      const t = await makeTask({
        taskYaml: `id: snap
prompt: Make lib/answer.sh print 42.
workspace: ./repo
deliverables: ["lib/**"]
gates:
  - id: check
    run: ["sh", "-c", "exit 1"]
    timeout: 10s
budget: { attempts: 1 }
`,
        repo: { "lib/answer.sh": "echo 41\n" },
      });
      const env = await runTask({
        loaded: loadTask(t.file),
        builder: noopBuilder(),
        store: log,
        localDir: store,
        sandbox: "none",
      });
      expect(env.status).toBe("ESCALATED");
      const runDir = join(store, "runs", env.run_id);
      expect(existsSync(runDir)).toBe(true);
      // The run's folder says its workspace was an overlay on the older snapshot.
      const older = snapshot(store, "m1-aaaa");
      snapshot(store, "m2-bbbb");
      setCurrent(store, "m2-bbbb");
      writeFileSync(
        join(runDir, "overlay.json"),
        JSON.stringify({ lower: join(older, "tree"), pristine_id: "cd".repeat(32) }),
      );
      const now = later();
      const prune = (keep: number, dryRun: boolean) =>
        pruneRuns({ store: log, localDir: store, policy: { olderThanMs: 0, keep }, now, dryRun });

      const kept = await prune(1, false);
      expect(kept.removed).toEqual([]);
      expect(kept.snapshots_removed).toEqual([]);
      expect(existsSync(older)).toBe(true);

      const runBytes = du(runDir);
      const snapBytes = du(older);
      const dry = await prune(0, true);
      expect(dry.removed.map((r) => r.run_id)).toEqual([env.run_id]);
      expect(dry.snapshots_removed).toEqual([{ snapshot: `${KEY}/m1-aaaa`, bytes: snapBytes }]);
      expect(dry.freed_bytes).toBe(runBytes + snapBytes);
      expect(existsSync(runDir) && existsSync(older)).toBe(true);

      const lines: string[] = [];
      const io: CommandIO = {
        out: (s) => void lines.push(s),
        err: (s) => void lines.push(s),
        stderr: process.stderr,
      };
      const code = await gcCommand(io, { store, "older-than": "0s" }, () => now);
      expect(code).toBe(0);
      expect(lines.join("")).toContain(`removed workspace snapshot ${KEY}/m1-aaaa (no run uses it`);
      expect(existsSync(runDir) || existsSync(older)).toBe(false);
      expect(existsSync(snapDir(store, "m2-bbbb"))).toBe(true);
    } finally {
      await log.close();
    }
  }, 60_000);
});
