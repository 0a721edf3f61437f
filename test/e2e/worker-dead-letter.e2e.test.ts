// The cap on lost claims end to end: a queued job whose worker is SIGKILLed every time it holds it is not
// reclaimed forever. After the cap (3 lost claims: the third lease that runs out) the next worker's claim
// finishes it as TOOL_FAILURE with the reason, and `runs` and `status JOB` show it as a dead letter.
import { spawn } from "node:child_process";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresEventStore } from "../../src/store/postgres/postgres-event-store.js";
import { type FreshDatabase, freshDatabase } from "../support/postgres.js";
import { BIN, exampleDir, loopgate, parseStdout, postgresHome, removeTemps, show, tempDir } from "./cli.js";

/** The cap loopgate ships with, as documented (docs/guides/postgres-and-workers.md). */
const CAP = 3;

let db: FreshDatabase;
let store: PostgresEventStore;
beforeAll(async () => {
  db = await freshDatabase();
  store = await PostgresEventStore.open(db.url);
});
afterAll(async () => {
  removeTemps();
  await store?.close();
  await db?.drop();
});

/**
 * Starts `loopgate worker` in a process group of its own, waits (bounded) until it says it claimed a
 * job, then SIGKILLs the whole group: the worker and the builder it started die without a word.
 */
async function killedOnceClaimed(id: string): Promise<string> {
  const child = spawn(process.execPath, [BIN, "worker", "--store", db.url, "--lease", "1s", "--id", id], {
    cwd: postgresHome(), // where the helper's commands on this store run: one machine, not the repository
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let stderr = "";
  const exited = new Promise<void>((r) => child.on("close", () => r()));
  const claimed = new Promise<boolean>((resolveClaimed) => {
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
      if (stderr.includes("claimed job-")) resolveClaimed(true);
    });
    child.on("close", () => resolveClaimed(false));
    setTimeout(() => resolveClaimed(false), 60_000);
  });
  const got = await claimed;
  try {
    if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
  } catch {
    // already gone
  }
  await exited;
  expect(got, stderr).toBe(true);
  return stderr;
}

describe("a job whose worker is SIGKILLed every time", () => {
  it(`is dead-lettered after ${CAP} lost claims, and runs and status show why`, async () => {
    const dir = join(tempDir(), "js-slugify");
    cpSync(exampleDir("js-slugify"), dir, { recursive: true });
    const sub = await loopgate([
      "submit",
      join(dir, "task.yaml"),
      "--builder",
      "sleep 30",
      "--store",
      db.url,
      "--json",
    ]);
    expect(sub.code, show(sub)).toBe(0);
    const { job_id: jobId } = parseStdout<{ job_id: string }>(sub);

    // The first claim takes the queued job; each later one takes it over after the lease ran out.
    for (let n = 1; n <= CAP; n++) {
      const err = await killedOnceClaimed(`w-dies-${n}`);
      expect(err).toContain(`claimed ${jobId} (attempt ${n}`);
      const row = (await store.queue().find({ jobId })) ?? null;
      expect(row).toMatchObject({ state: "claimed", lostClaims: n - 1 });
    }

    // The third lease runs out: the next worker never gets the job; its claim finishes it and it stops idle.
    const last = await loopgate(
      ["worker", "--store", db.url, "--until-idle", "--lease", "1s", "--id", "w-next"],
      {
        timeoutMs: 90_000,
      },
    );
    expect(last.code, show(last)).toBe(0);
    expect(last.stderr).not.toContain(`claimed ${jobId}`);
    // Reaching the cap is never silent: the worker whose claim applied it says so, with the reason.
    expect(last.stderr).toContain(
      `finished ${jobId} as TOOL_FAILURE without claiming it (dead letter): its worker was lost ${CAP} time(s)`,
    );
    const row = await store.queue().find({ jobId });
    expect(row).toMatchObject({ state: "finished", status: "TOOL_FAILURE", lostClaims: CAP, attempts: CAP });
    expect(row?.deadReason).toContain(`lost ${CAP} time(s)`);
    expect(row?.deadReason).toContain(`last held by w-dies-${CAP}`);

    const runs = await loopgate(["runs", "--store", db.url]);
    expect(runs.code, show(runs)).toBe(0);
    expect(runs.stdout).toContain(`finished: TOOL_FAILURE (dead letter: its worker was lost ${CAP} time(s)`);
    expect(runs.stdout).toContain(`job ${jobId}`);

    const status = await loopgate(["status", jobId, "--store", db.url, "--json"]);
    // Whether or not its run had started, `status JOB --json` carries the job's queue state.
    const body = parseStdout<{ queue?: { state?: string; dead_letter?: string; lost_claims?: number } }>(
      status,
    );
    expect(body.queue, show(status)).toMatchObject({ state: "finished", lost_claims: CAP });
    expect(body.queue?.dead_letter).toContain(`lost ${CAP} time(s)`);
    if ("reason" in body) expect(String(body.reason)).toContain(`lost ${CAP} time(s)`);
  }, 240_000);
});
