// `loopgate runs` and `loopgate status` beside a Postgres store show where queued work stands: queued,
// running on which worker until when, expired after that worker was SIGKILLed, finished.
import { spawn } from "node:child_process";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FreshDatabase, freshDatabase } from "../support/postgres.js";
import { BIN, exampleDir, loopgate, parseStdout, postgresHome, removeTemps, show, tempDir } from "./cli.js";

interface Queue {
  job_id: string;
  state: string;
  worker: string | null;
  lease_expires_at: string | null;
  run_id: string | null;
}
interface Row {
  run_id: string | null;
  status: string;
  queue?: Queue;
}

let db: FreshDatabase;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(async () => {
  removeTemps();
  await db?.drop();
});

const status = async (id: string) => {
  const r = await loopgate(["status", id, "--store", db.url, "--json"]);
  return { code: r.code, body: parseStdout<{ status: string; queue?: Queue }>(r), raw: r };
};
const rows = async () => parseStdout<Row[]>(await loopgate(["runs", "--store", db.url, "--json"]));

/** Polls `status JOB` (bounded: 60 s) until its queue state is `state`. */
async function until(job: string, state: string): Promise<{ status: string; queue?: Queue }> {
  for (let i = 0; i < 120; i++) {
    const s = await status(job);
    if (s.body.queue?.state === state) return s.body;
    await sleep(500);
  }
  throw new Error(`job ${job} never reached ${state}`);
}

describe("queue state in runs and status", () => {
  it("queued → running on a worker → expired after its SIGKILL → finished by the next worker", async () => {
    const dir = join(tempDir(), "js-slugify");
    cpSync(exampleDir("js-slugify"), dir, { recursive: true });
    const sub = await loopgate([
      "submit",
      join(dir, "task.yaml"),
      "--builder",
      "sleep 3",
      "--store",
      db.url,
      "--json",
    ]);
    expect(sub.code, show(sub)).toBe(0);
    const job = parseStdout<{ job_id: string }>(sub).job_id;

    const queued = await status(job);
    expect(queued.code, show(queued.raw)).toBe(3);
    expect(queued.body).toMatchObject({
      status: "QUEUED",
      queue: { job_id: job, state: "queued", worker: null },
    });
    expect(await rows()).toEqual([
      expect.objectContaining({
        run_id: null,
        status: "QUEUED",
        queue: expect.objectContaining({ job_id: job }),
      }),
    ]);
    const text = await loopgate(["runs", "--store", db.url]);
    expect(text.stdout).toContain(`queued since`);

    const w = spawn(process.execPath, [BIN, "worker", "--store", db.url, "--lease", "2s", "--id", "w-q"], {
      cwd: postgresHome(), // where the helper's commands on this store run: one machine, not the repository
      stdio: ["ignore", "ignore", "ignore"],
    });
    const exited = new Promise((r) => w.on("close", r));
    try {
      const running = await until(job, "running");
      expect(running).toMatchObject({ status: "RUNNING", queue: { worker: "w-q" } });
      expect(Date.parse(running.queue?.lease_expires_at ?? "")).not.toBeNaN();
      const runId = running.queue?.run_id ?? "";
      expect(await status(runId)).toMatchObject({
        code: 3,
        body: { queue: { state: "running", worker: "w-q" } },
      });
      const listed = await loopgate(["runs", "--store", db.url]);
      expect(listed.stdout).toContain(`running on w-q, lease until`);
      const workers = await loopgate(["workers", "--store", db.url]);
      expect(workers.stdout).toMatch(/^w-q {2}pid \d+ on /m);
      expect(workers.stdout).toContain(`  holds ${job}  running  run ${runId}  lease until`);
    } finally {
      w.kill("SIGKILL");
      await exited;
    }
    const expired = await until(job, "expired");
    expect(expired.queue?.worker).toBe("w-q");

    const next = await loopgate([
      "worker",
      "--store",
      db.url,
      "--until-idle",
      "--lease",
      "2s",
      "--id",
      "w-r",
    ]);
    expect(next.code, show(next)).toBe(0);
    const [row] = await rows();
    expect(row?.queue).toMatchObject({
      job_id: job,
      state: "finished",
      worker: null,
      lease_expires_at: null,
    });
    expect(row?.status).not.toBe("RUNNING");
    // Finished: `status JOB` is the run's envelope, the same JSON `status RUN` prints.
    const done = await status(job);
    expect(done.body.status).toBe(row?.status);
    expect(done.body).not.toHaveProperty("queue");
  });
});
