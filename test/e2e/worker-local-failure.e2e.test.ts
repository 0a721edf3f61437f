// A worker never loses a job: one it cannot start for a reason of its own machine (an unusable folder,
// no bubblewrap) goes back to the queue with the reason, and after a few in a row the worker stops,
// exit 1, naming it; a job whose task is bad is finished as refused. `runs` lists every submitted job,
// `status JOB` prints a word its exit code agrees with, and `workers` marks an overdue worker stale.
import { cpSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { PostgresEventStore } from "../../src/store/postgres/postgres-event-store.js";
import { type FreshDatabase, freshDatabase } from "../support/postgres.js";
import { exampleDir, loopgate, parseStdout, removeTemps, show, tempDir, writeTask } from "./cli.js";

afterAll(removeTemps);

interface Queue {
  job_id: string;
  state: string;
  worker: string | null;
  status?: string;
  handed_back?: { times: number; last_reason: string; last_worker: string };
  worker_stale?: boolean;
}
interface Row {
  run_id: string | null;
  status: string;
  queue?: Queue;
}

/** A fresh database for one test, and a store on it for reading the queue as it is. */
async function withDatabase(work: (db: FreshDatabase, store: PostgresEventStore) => Promise<void>) {
  const db = await freshDatabase();
  const store = await PostgresEventStore.open(db.url);
  try {
    await work(db, store);
  } finally {
    await store.close();
    await db.drop();
  }
}

function exampleCopy(): string {
  const dir = join(tempDir(), "js-slugify");
  cpSync(exampleDir("js-slugify"), dir, { recursive: true });
  return join(dir, "task.yaml");
}

async function submit(url: string, task: string, builder: string[] = ["--oracle"]): Promise<string> {
  const r = await loopgate(["submit", task, ...builder, "--store", url, "--json"]);
  expect(r.code, show(r)).toBe(0);
  return parseStdout<{ job_id: string }>(r).job_id;
}

const runs = async (url: string) => parseStdout<Row[]>(await loopgate(["runs", "--store", url, "--json"]));

describe.concurrent("a job this machine cannot start goes back to the queue", () => {
  it("a worker whose folder is a file leaves every job queued, records why, and exits 1 naming it", async () => {
    await withDatabase(async (db, store) => {
      const task = exampleCopy();
      const first = await submit(db.url, task);
      const second = await submit(db.url, task);
      const file = join(tempDir(), "not-a-folder");
      writeFileSync(file, "a file, not a folder\n");

      const bad = await loopgate([
        "worker",
        "--store",
        db.url,
        "--until-idle",
        "--work-dir",
        file,
        "--id",
        "w-bad",
      ]);
      expect(bad.code, show(bad)).toBe(1);
      expect(bad.stderr).toContain(
        `could not start 3 job(s) in a row on this machine; last reason: the work folder ${file} is not usable`,
      );
      // Oldest first: the worker took the first job three times, the second never; neither is finished.
      const jobs = await store.queue().list();
      expect(jobs.map((j) => [j.jobId, j.state, j.claimedBy, j.status, j.attempts])).toEqual([
        [first, "queued", null, null, 3],
        [second, "queued", null, null, 0],
      ]);
      expect(jobs[0]?.handedBack).toMatchObject({ times: 3, by: "w-bad" });
      expect(jobs[0]?.handedBack?.reason).toContain(`the work folder ${file} is not usable: EEXIST`);
      expect(jobs[1]?.handedBack).toBeNull();

      // `runs` lists both, queued, the first with why it went back.
      const rows = await runs(db.url);
      expect(rows.map((r) => [r.status, r.queue?.job_id, r.queue?.state])).toEqual([
        ["QUEUED", first, "queued"],
        ["QUEUED", second, "queued"],
      ]);
      expect(rows[0]?.queue?.handed_back).toMatchObject({ times: 3, last_worker: "w-bad" });
      const text = await loopgate(["runs", "--store", db.url]);
      expect(text.stdout).toContain(`(job ${first}; handed back 3 time(s), last by w-bad at `);
      // `status JOB`: not finished, in words and in its exit code.
      const status = await loopgate(["status", first, "--store", db.url]);
      expect(status.code, show(status)).toBe(3);
      expect(status.stdout).toMatch(new RegExp(`^QUEUED · job ${first} · .* · not finished\\n`));
      expect(status.stdout).toContain("handed back 3 time(s)");
      // It stopped cleanly: no worker left announced.
      const workers = parseStdout<{ workers: unknown[] }>(
        await loopgate(["workers", "--store", db.url, "--json"]),
      );
      expect(workers.workers).toEqual([]);

      // A worker with a usable folder then runs both.
      const good = join(tempDir(), "work");
      const w = await loopgate([
        "worker",
        "--store",
        db.url,
        "--until-idle",
        "--work-dir",
        good,
        "--id",
        "w-good",
      ]);
      expect(w.code, show(w)).toBe(0);
      for (const id of [first, second]) {
        const done = await loopgate(["status", id, "--store", db.url, "--json"]);
        expect(done.code, show(done)).toBe(0);
        expect(parseStdout<{ status: string }>(done).status).toBe("SUCCESS");
      }
    });
  });

  it("a machine without bubblewrap hands the job back instead of recording a TOOL_FAILURE run", async () => {
    await withDatabase(async (db, store) => {
      const job = await submit(db.url, exampleCopy());
      // PATH without bwrap (the CLI runs as `node` by its absolute path, so it needs no PATH itself).
      const w = await loopgate(
        ["worker", "--store", db.url, "--once", "--work-dir", join(tempDir(), "w"), "--id", "w-nobwrap"],
        { env: { PATH: join(tempDir(), "empty-bin") } },
      );
      expect(w.code, show(w)).toBe(1);
      expect(w.stderr).toContain("last reason: bubblewrap (bwrap) is not installed");
      const [row] = await store.queue().list();
      expect(row).toMatchObject({ jobId: job, state: "queued", status: null, runId: null });
      expect(row?.handedBack).toMatchObject({ times: 1, by: "w-nobwrap" });
      expect(row?.handedBack?.reason).toContain("bubblewrap (bwrap) is not installed");
      // No run was started, so none was recorded as failed.
      expect((await runs(db.url)).map((r) => [r.run_id, r.status])).toEqual([[null, "QUEUED"]]);
    });
  });
});

describe.concurrent("what `runs` and `status JOB` say of a job", () => {
  it("claimed: CLAIMED, exit 3; a bad task: finished REFUSED (not handed back), listed, exit 2", async () => {
    await withDatabase(async (db, store) => {
      // A judge with no model to judge by: submit accepts it, the run refuses to start (the task's fault).
      const judged = writeTask(
        [
          "id: judged",
          "prompt: Make greeting.txt say hi.",
          "workspace: ./repo",
          "gates:",
          '  - { id: ok, run: ["true"], timeout: 10s }',
          'judge: { rules: ["the greeting is friendly"] }',
          "",
        ].join("\n"),
      );
      const refused = await submit(db.url, judged, ["--noop"]);
      const held = await submit(db.url, exampleCopy());

      // The refused job first (oldest), by a real worker that then stops on the one it holds.
      const w = await loopgate(["worker", "--store", db.url, "--once", "--work-dir", join(tempDir(), "w")]);
      expect(w.code, show(w)).toBe(0);
      const row = await store.queue().find({ jobId: refused });
      expect(row).toMatchObject({ state: "finished", handedBack: null });
      expect(row?.status).toMatch(
        /^REFUSED: .*task\.yaml: judge: the task configures a judge but no judge model/,
      );
      const text = await loopgate(["status", refused, "--store", db.url]);
      expect(text.code, show(text)).toBe(2);
      expect(text.stdout).toMatch(new RegExp(`^REFUSED · job ${refused} · `));
      const json = await loopgate(["status", refused, "--store", db.url, "--json"]);
      expect(json.code).toBe(2);
      expect(parseStdout(json)).toMatchObject({ job_id: refused, status: "REFUSED", finished: true });

      // Another claims the second job and has not started its run.
      const claim = await store.queue().claim("w-hold", 600_000);
      expect(claim?.job.jobId).toBe(held);
      const claimed = await loopgate(["status", held, "--store", db.url]);
      expect(claimed.code, show(claimed)).toBe(3);
      expect(claimed.stdout).toMatch(new RegExp(`^CLAIMED · job ${held} · .* · not finished\\n`));
      expect(claimed.stdout).toContain("claimed by w-hold, run not started yet");

      // `runs` lists both: the refused one (no run to show) and the claimed one.
      const rows = await runs(db.url);
      expect(rows.map((r) => [r.status, r.queue?.job_id, r.queue?.state])).toEqual([
        ["REFUSED", refused, "finished"],
        ["CLAIMED", held, "claimed"],
      ]);
    });
  });

  it("`workers` marks a worker whose heartbeat is overdue stale, and `runs` the job it holds", async () => {
    await withDatabase(async (db, store) => {
      const job = await submit(db.url, exampleCopy());
      const queue = store.queue();
      // Both present for 10 minutes; one promised a heartbeat every 100 ms, the other every 10 minutes.
      await queue.announceWorker(
        { workerId: "w-quiet", host: "h", pid: 1, concurrency: 1, beatMs: 100 },
        600_000,
      );
      await queue.announceWorker(
        { workerId: "w-fine", host: "h", pid: 2, concurrency: 1, beatMs: 600_000 },
        600_000,
      );
      const claim = await queue.claim("w-quiet", 600_000);
      if (!claim) throw new Error("no claim");
      expect(await queue.setRunId(job, claim.token, "20261201-000000-aaaaaa")).toBe(true);
      // Past two of w-quiet's intervals with no heartbeat (overdue from then on, for minutes).
      await sleep(500);

      const text = await loopgate(["workers", "--store", db.url]);
      expect(text.code, show(text)).toBe(0);
      expect(text.stdout).toMatch(
        /^w-quiet {2}pid 1 on h .*STALE: heartbeat overdue \(last .*, due every 100 ms\)$/m,
      );
      expect(text.stdout).toMatch(/^w-fine {2}pid 2 on h .*seen until \S+$/m);
      const json = parseStdout<{ workers: { worker: { workerId: string }; stale: boolean }[] }>(
        await loopgate(["workers", "--store", db.url, "--json"]),
      );
      expect(json.workers.map((w) => [w.worker.workerId, w.stale])).toEqual([
        ["w-fine", false],
        ["w-quiet", true],
      ]);

      const rows = await runs(db.url);
      expect(rows[0]?.queue).toMatchObject({
        job_id: job,
        state: "running",
        worker: "w-quiet",
        worker_stale: true,
      });
      const listed = await loopgate(["runs", "--store", db.url]);
      expect(listed.stdout).toContain("running on w-quiet (stale: its heartbeat is overdue), lease until");
    });
  });
});
