// `loopgate submit` + `loopgate worker` against a real PostgreSQL: a queued run finishes SUCCESS, and a
// worker SIGKILLed mid-run is replaced, after its claim's lease expires, by one that resumes the run to
// the same envelope an uninterrupted run has.
import { spawn } from "node:child_process";
import { cpSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresEventStore } from "../../src/store/postgres/postgres-event-store.js";
import { type FreshDatabase, freshDatabase } from "../support/postgres.js";
import {
  BIN,
  exampleDir,
  loopgate,
  parseStdout,
  postgresHome,
  removeTemps,
  show,
  tempDir,
  withoutCanaryNames,
} from "./cli.js";

let db: FreshDatabase;
let store: PostgresEventStore;
beforeAll(async () => {
  db = await freshDatabase();
});
afterAll(async () => {
  removeTemps();
  await store?.close();
  await db?.drop();
});

function exampleCopy(): string {
  const dir = join(tempDir(), "js-slugify");
  cpSync(exampleDir("js-slugify"), dir, { recursive: true });
  return join(dir, "task.yaml");
}

async function jobs() {
  store ??= await PostgresEventStore.open(db.url);
  return store.queue().list();
}

/** What must match between runs: the envelope less its id, timings and event count. */
function comparable(env: Record<string, unknown>): unknown {
  const {
    run_id: _id,
    audit,
    gates,
    ...rest
  } = env as { run_id: string; audit: Record<string, unknown>; gates: Record<string, unknown>[] };
  const { latency_ms: _l, event_count: _c, ...auditRest } = audit;
  return {
    ...rest,
    audit: auditRest,
    gates: gates.map(({ duration_ms: _d, log_excerpt: _x, ...g }) => withoutCanaryNames(g)),
  };
}

describe.sequential("submit and worker", () => {
  it("a submitted oracle run is finished SUCCESS by `worker --until-idle`", async () => {
    const task = exampleCopy();
    const sub = await loopgate(["submit", task, "--oracle", "--store", db.url, "--json"]);
    expect(sub.code, show(sub)).toBe(0);
    const { job_id } = parseStdout<{ job_id: string; state: string }>(sub);
    const w = await loopgate(["worker", "--store", db.url, "--until-idle", "--id", "w-one"]);
    expect(w.code, show(w)).toBe(0);
    expect(w.stderr).toContain(`finished ${job_id}: SUCCESS`);
    const job = (await jobs()).find((j) => j.jobId === job_id);
    expect(job).toMatchObject({ state: "finished", status: "SUCCESS", attempts: 1 });
    const status = await loopgate(["status", job?.runId ?? "", "--store", db.url, "--json"]);
    expect(status.code, show(status)).toBe(0);
    expect(parseStdout<{ status: string }>(status).status).toBe("SUCCESS");
    const live = await loopgate(["workers", "--store", db.url, "--json"]);
    expect(parseStdout<{ workers: unknown[]; unfinished: unknown[] }>(live)).toEqual({
      workers: [],
      unfinished: [],
    });
  });

  it("submit refuses a folder store and a missing builder choice, queueing nothing", async () => {
    const task = exampleCopy();
    const before = (await jobs()).length;
    const folder = await loopgate(["submit", task, "--oracle", "--store", tempDir()]);
    expect(folder.code).toBe(2);
    expect(folder.stderr).toContain("the run queue lives in PostgreSQL");
    const none = await loopgate(["submit", task, "--store", db.url]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("choose exactly one builder");
    expect((await jobs()).length).toBe(before);
  });

  it("a worker SIGKILLed mid-run is replaced after its lease expires; the resumed run ends as an uninterrupted one", async () => {
    const task = exampleCopy();
    const script = `scripted:${join(exampleDir("js-slugify"), "agent/honest.yaml")}`;
    const ref = await loopgate(["run", task, "--model", script, "--store", db.url, "--json"]);
    expect(ref.code, show(ref)).toBe(0);
    const reference = parseStdout<Record<string, unknown>>(ref);

    const sub = await loopgate(["submit", task, "--model", script, "--store", db.url, "--json"]);
    const { job_id } = parseStdout<{ job_id: string }>(sub);
    const killed = await loopgate(
      ["worker", "--store", db.url, "--once", "--lease", "2s", "--id", "w-dies"],
      {
        env: { LOOPGATE_FAULT_KILL_AFTER_EVENTS: "12" },
      },
    );
    expect(killed.signal, show(killed)).toBe("SIGKILL");
    const held = (await jobs()).find((j) => j.jobId === job_id);
    expect(held).toMatchObject({ state: "claimed", claimedBy: "w-dies", attempts: 1 });
    const runId = held?.runId ?? "";
    expect(runId).not.toBe("");

    const next = await loopgate([
      "worker",
      "--store",
      db.url,
      "--until-idle",
      "--lease",
      "2s",
      "--id",
      "w-next",
    ]);
    expect(next.code, show(next)).toBe(0);
    expect(next.stderr).toContain(`claimed ${job_id} (attempt 2, run ${runId})`);
    expect((await jobs()).find((j) => j.jobId === job_id)).toMatchObject({
      state: "finished",
      status: "SUCCESS",
      attempts: 2,
      runId,
    });
    const status = await loopgate(["status", runId, "--store", db.url, "--json"]);
    expect(comparable(parseStdout(status))).toEqual(comparable(reference));
    const events = await loopgate(["events", runId, "--store", db.url, "--json"]);
    const types = events.stdout
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { type: string }).type);
    expect(types.filter((t) => t === "run_resumed")).toHaveLength(1);
    expect(types.filter((t) => t === "run_started")).toHaveLength(1);
  });
});

describe("a worker that loses its database", () => {
  it("exits 1 naming the database, while the held run's builder is still working", async () => {
    const own = await freshDatabase();
    try {
      const task = exampleCopy();
      const sub = await loopgate(["submit", task, "--builder", "sleep 60", "--store", own.url]);
      expect(sub.code, show(sub)).toBe(0);
      const child = spawn(
        process.execPath,
        [BIN, "worker", "--store", own.url, "--lease", "2s", "--id", "w-lost"],
        {
          cwd: postgresHome(), // where the helper's commands on this store run: one machine, not the repository
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      let stderr = "";
      const claimed = new Promise<void>((resolveClaimed) => {
        child.stderr.setEncoding("utf8").on("data", (d: string) => {
          stderr += d;
          if (stderr.includes("claimed job-")) resolveClaimed();
        });
      });
      const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
      await claimed;
      await own.drop(); // DROP DATABASE … WITH (FORCE): every session of the worker is cut
      const code = await Promise.race([
        exited,
        new Promise<"hung">((r) => setTimeout(() => r("hung"), 50_000)),
      ]);
      if (code === "hung") child.kill("SIGKILL");
      expect(code, stderr).toBe(1);
      expect(stderr).toContain(`lost the database ${own.url.replace(/\/$/, "")}`);
    } finally {
      await own.drop();
    }
  });
});

/** Starts a worker on `url`; resolves `claimed` once it says it claimed a job. */
function startWorker(url: string, id: string) {
  const child = spawn(process.execPath, [BIN, "worker", "--store", url, "--lease", "5s", "--id", id], {
    cwd: postgresHome(), // where the helper's commands on this store run: one machine, not the repository
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  const claimed = new Promise<void>((resolveClaimed) => {
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      stderr += d;
      if (stderr.includes("claimed job-")) resolveClaimed();
    });
  });
  const exited = new Promise<number | null>((r) => child.on("close", (code) => r(code)));
  const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
  return { child, claimed, exited: exited.finally(() => clearTimeout(timer)), stderr: () => stderr };
}

describe.sequential("SIGTERM", () => {
  it("once: the worker claims nothing more, finishes the held run and exits 0", async () => {
    const task = exampleCopy();
    const sub = await loopgate(["submit", task, "--builder", "sleep 4", "--store", db.url, "--json"]);
    const { job_id } = parseStdout<{ job_id: string }>(sub);
    const second = await loopgate(["submit", task, "--oracle", "--store", db.url, "--json"]);
    const other = parseStdout<{ job_id: string }>(second).job_id;
    const w = startWorker(db.url, "w-term-1");
    await w.claimed;
    const listed = await loopgate(["workers", "--store", db.url, "--json"]);
    const view = parseStdout<{ workers: { worker: { workerId: string }; holds: { jobId: string }[] }[] }>(
      listed,
    );
    expect(view.workers.map((x) => [x.worker.workerId, x.holds.map((j) => j.jobId)])).toEqual([
      ["w-term-1", [job_id]],
    ]);
    w.child.kill("SIGTERM");
    expect(await w.exited, w.stderr()).toBe(0);
    const all = await jobs();
    expect(all.find((j) => j.jobId === job_id)).toMatchObject({ state: "finished", status: "ESCALATED" });
    expect(all.find((j) => j.jobId === other)).toMatchObject({ state: "queued", attempts: 0 });
  });

  it("twice: the held run is interrupted and its job handed back to the queue with its run id", async () => {
    const own = await freshDatabase();
    const ownStore = await PostgresEventStore.open(own.url);
    try {
      const task = exampleCopy();
      const sub = await loopgate(["submit", task, "--builder", "sleep 60", "--store", own.url, "--json"]);
      const { job_id } = parseStdout<{ job_id: string }>(sub);
      const w = startWorker(own.url, "w-term-2");
      await w.claimed;
      w.child.kill("SIGTERM");
      await new Promise((r) => setTimeout(r, 1500));
      w.child.kill("SIGTERM");
      expect(await w.exited, w.stderr()).toBe(0);
      expect(w.stderr()).toContain(`handed ${job_id} back to the queue`);
      const [job] = await ownStore.queue().list();
      expect(job).toMatchObject({
        jobId: job_id,
        state: "queued",
        claimedBy: null,
        lockedUntil: null,
        attempts: 1,
      });
      expect(job?.runId).toMatch(/^\d{8}-/);
    } finally {
      await ownStore.close();
      await own.drop();
    }
  });
});
