// `loopgate gc` removes the folders of finished runs (the events stay) and never touches a running one.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, lstatSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, type Envelope, exampleTask, loopgate, parseStdout, removeTemps, show, tempDir } from "./cli.js";

afterAll(removeTemps);
const TASK = exampleTask("js-slugify");

interface GcJson {
  dry_run: boolean;
  removed: { run_id: string; bytes: number; files: number; path: string }[];
  kept: { run_id: string; why: string }[];
  freed_bytes: number;
}

/** Apparent size and file count of a folder, measured here (not by loopgate). */
function sizeOf(dir: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = lstatSync(p);
    if (st.isDirectory()) {
      const s = sizeOf(p);
      bytes += s.bytes;
      files += s.files;
    } else {
      bytes += st.size;
      files++;
    }
  }
  return { bytes, files };
}

describe("gc", () => {
  const store = tempDir();
  const ids: string[] = [];
  const folder = (id: string) => join(store, "runs", id);

  beforeAll(async () => {
    for (let i = 0; i < 3; i++) {
      const r = await loopgate(["run", TASK, "--noop", "--max-attempts", "1", "--json", "--store", store]);
      expect(r.code, show(r)).toBe(1);
      ids.push(parseStdout<Envelope>(r).run_id);
    }
  }, 180_000);

  it("refuses an age without a unit and a negative --keep, naming the flag", async () => {
    const a = await loopgate(["gc", "--older-than", "7", "--store", store]);
    expect(a.code, show(a)).toBe(2);
    expect(a.stderr).toContain("--older-than");
    const k = await loopgate(["gc", "--keep", "-1", "--store", store]);
    expect(k.code, show(k)).toBe(2);
    expect(k.stderr).toContain("--keep");
    for (const id of ids) expect(existsSync(folder(id))).toBe(true);
  });

  it("by age, then by --keep: dry run first, then the real removal; events, status and report survive", async () => {
    // Every run finished seconds ago: a day's age spares them all.
    const young = await loopgate(["gc", "--older-than", "1d", "--json", "--store", store]);
    expect(young.code, show(young)).toBe(0);
    expect(parseStdout<GcJson>(young).removed).toEqual([]);
    for (const id of ids) expect(existsSync(folder(id))).toBe(true);

    // What the removal frees, measured by du (disk blocks, as loopgate reports them).
    const du = (dir: string) =>
      Number(execFileSync("du", ["-s", "-B1", dir], { encoding: "utf8" }).split("\t")[0]);
    const sizes = Object.fromEntries(ids.map((id) => [id, { bytes: du(folder(id)) }]));
    const oldest = ids.slice(0, 2);
    const dry = await loopgate([
      "gc",
      "--older-than",
      "0s",
      "--keep",
      "1",
      "--dry-run",
      "--json",
      "--store",
      store,
    ]);
    expect(dry.code, show(dry)).toBe(0);
    const plan = parseStdout<GcJson>(dry);
    expect(plan.dry_run).toBe(true);
    expect(plan.removed.map((r) => r.run_id).sort()).toEqual([...oldest].sort());
    for (const id of ids) expect(existsSync(folder(id))).toBe(true);

    const real = await loopgate(["gc", "--older-than", "0s", "--keep", "1", "--store", store]);
    expect(real.code, show(real)).toBe(0);
    const expected = oldest.reduce((n, id) => n + (sizes[id]?.bytes ?? 0), 0);
    expect(expected).toBeGreaterThan(0);
    expect(real.stdout).toContain(`(${expected} bytes) from 2 run folder(s)`);
    for (const id of oldest) expect(real.stdout).toContain(`removed ${id}`);
    expect(real.stdout).toContain("kept 1 run(s): among the 1 most recent runs");
    for (const id of oldest) expect(existsSync(folder(id))).toBe(false);
    expect(existsSync(folder(ids[2] as string))).toBe(true);

    // The audit trail stays: status, events and report read the log, not the folder.
    const gone = oldest[0] as string;
    const st = await loopgate(["status", gone, "--json", "--store", store]);
    expect(st.code, show(st)).toBe(1);
    expect(parseStdout<Envelope>(st).run_id).toBe(gone);
    const ev = await loopgate(["events", gone, "--store", store]);
    expect(ev.stdout).toContain("run_finished");
    const rep = await loopgate(["report", gone, "--store", store]);
    expect(rep.code, show(rep)).toBe(1);
    expect(rep.stdout).toContain("ESCALATED");

    // Pruning again finds nothing more to free.
    const again = await loopgate(["gc", "--older-than", "0s", "--keep", "1", "--json", "--store", store]);
    expect(parseStdout<GcJson>(again).freed_bytes).toBe(0);
  });

  it("never removes the folder of a run that is running (its log has no run_finished)", async () => {
    const own = tempDir();
    const child = spawn(
      process.execPath,
      [BIN, "run", TASK, "--builder", "sleep 120", "--max-attempts", "1", "--store", own],
      { stdio: "ignore" },
    );
    try {
      // Wait until the run is in its builder: the log says attempt 1 started and has no verdict.
      let runId = "";
      for (let i = 0; i < 600 && !runId; i++) {
        await new Promise((r) => setTimeout(r, 200));
        const rs = await loopgate(["runs", "--json", "--store", own]);
        const row =
          rs.code === 0 ? parseStdout<{ run_id: string; status: string; attempts: number }[]>(rs)[0] : null;
        if (row?.status === "RUNNING" && row.attempts >= 1) runId = row.run_id;
      }
      expect(runId, "the run never reached its builder").not.toBe("");
      const before = sizeOf(join(own, "runs", runId));
      const r = await loopgate(["gc", "--older-than", "0s", "--json", "--store", own]);
      expect(r.code, show(r)).toBe(0);
      const out = parseStdout<GcJson>(r);
      expect(out.removed).toEqual([]);
      expect(out.kept).toEqual([{ run_id: runId, why: expect.stringMatching(/no verdict/) }]);
      expect(existsSync(join(own, "runs", runId, "workspace"))).toBe(true);
      expect(sizeOf(join(own, "runs", runId)).files).toBe(before.files);
      // No verdict yet, so no report either.
      const rep = await loopgate(["report", runId, "--store", own]);
      expect(rep.code, show(rep)).toBe(2);
      expect(rep.stderr).toContain(`run ${runId} has not finished`);
    } finally {
      child.kill("SIGKILL");
    }
  }, 150_000);
});
