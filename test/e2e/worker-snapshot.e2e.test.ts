// A submitted task lives in the store: `submit` snapshots the task folder and what the task names, the
// worker writes the snapshot out under its --work-dir and runs from there. The submitter's folder can be
// gone; the verdict is the one a run from the original path has; held-out files stay out of the builder's reach.
import {
  chmodSync,
  cpSync,
  existsSync,
  readdirSync,
  readFileSync,
  renameSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PostgresEventStore } from "../../src/store/postgres/postgres-event-store.js";
import { type FreshDatabase, freshDatabase } from "../support/postgres.js";
import { runTree } from "../support/run-tree.js";
import { exampleDir, loopgate, parseStdout, removeTemps, show, tempDir, withoutCanaryNames } from "./cli.js";

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

/** A fresh copy of the js-slugify example; returns its folder and task file. */
function exampleCopy(): { dir: string; task: string } {
  const dir = join(tempDir(), "js-slugify");
  cpSync(exampleDir("js-slugify"), dir, { recursive: true });
  return { dir, task: join(dir, "task.yaml") };
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

async function blobCount(): Promise<number> {
  return store.withClient(async (c) =>
    Number((await c.query("SELECT count(*) AS n FROM loopgate.blobs")).rows[0].n),
  );
}

let workers = 0;

/** Runs one worker until the queue is empty, in its own folder (cwd and --work-dir), as on another machine. */
async function workerElsewhere(): Promise<{ workDir: string; stderr: string }> {
  const workDir = tempDir();
  const w = await loopgate(
    ["worker", "--store", db.url, "--until-idle", "--id", `snap-${++workers}`, "--work-dir", workDir],
    { cwd: workDir },
  );
  expect(w.code, show(w)).toBe(0);
  return { workDir, stderr: w.stderr };
}

describe.sequential("submitted tasks live in the store", () => {
  it("the submitter's folder is gone; a worker elsewhere finishes the run SUCCESS with the envelope of a run from the original path", async () => {
    const { dir, task } = exampleCopy();
    const ref = await loopgate(["run", task, "--oracle", "--store", db.url, "--json"], { cwd: tempDir() });
    expect(ref.code, show(ref)).toBe(0);
    const reference = parseStdout<Record<string, unknown>>(ref);

    const sub = await loopgate(["submit", task, "--oracle", "--store", db.url, "--json"], { cwd: tempDir() });
    expect(sub.code, show(sub)).toBe(0);
    const job = parseStdout<{ job_id: string; task_snapshot: { manifest: string; files: number } }>(sub);
    // Every file of the example is named by the task (its folder): counted independently here.
    const count = (d: string): number =>
      readdirSync(d, { withFileTypes: true }).reduce(
        (n, e) => n + (e.isDirectory() ? count(join(d, e.name)) : e.isFile() ? 1 : 0),
        0,
      );
    expect(job.task_snapshot.files).toBe(
      count(dir) - (existsSync(join(dir, ".loopgate")) ? count(join(dir, ".loopgate")) : 0),
    );
    renameSync(dir, `${dir}-moved-away`);

    const { workDir, stderr } = await workerElsewhere();
    expect(stderr).toContain(`finished ${job.job_id}: SUCCESS`);
    const row = (await store.queue().list()).find((j) => j.jobId === job.job_id);
    expect(row).toMatchObject({ state: "finished", status: "SUCCESS" });
    const runId = row?.runId ?? "";
    const status = await loopgate(["status", runId, "--store", db.url, "--json"]);
    expect(comparable(parseStdout(status))).toEqual(comparable(reference));
    // The run was checked by the worker's copy of the task, which is not inside the run's workspace.
    const started = (await store.readStream(`run-${runId}`))[0] as unknown as { data: { task_path: string } };
    expect(started.data.task_path).toBe(join(workDir, "tasks", job.task_snapshot.manifest, "task.yaml"));
    const tree = await runTree(workDir, runId, db.url);
    expect(existsSync(join(tree, "heldout-test"))).toBe(false);
    expect(existsSync(join(tree, "src", "slugify.js"))).toBe(true);
  });

  it("a forged run from a snapshot still fails its held-out gate, and its builder cannot read the held-out files", async () => {
    const { dir, task } = exampleCopy();
    const workDir = tempDir();
    const heldout = readFileSync(join(dir, "heldout/heldout-test/slugify.heldout.test.js"), "utf8");
    // The forger also tries to copy the held-out tests from where the worker keeps the snapshot.
    const forger = join(tempDir(), "forger.sh");
    writeFileSync(
      forger,
      `#!/bin/sh\ncat ${workDir}/tasks/*/heldout/heldout-test/* > src/leak.txt 2>&1 || true\n` +
        `printf '\\n// Unicode handling reviewed.\\n' >> src/slugify.js\necho "Fixed! All tests pass."\n`,
    );
    chmodSync(forger, 0o755);
    const sub = await loopgate(["submit", task, "--builder", forger, "--store", db.url, "--json"]);
    expect(sub.code, show(sub)).toBe(0);
    const { job_id } = parseStdout<{ job_id: string }>(sub);
    renameSync(dir, `${dir}-moved-away`);
    const w = await loopgate(
      ["worker", "--store", db.url, "--until-idle", "--id", `snap-${++workers}`, "--work-dir", workDir],
      { cwd: workDir },
    );
    expect(w.code, show(w)).toBe(0);
    expect(w.stderr).toContain(`finished ${job_id}: ESCALATED`);
    const runId = (await store.queue().list()).find((j) => j.jobId === job_id)?.runId ?? "";
    const status = await loopgate(["status", runId, "--store", db.url, "--json"]);
    const env = parseStdout<{
      status: string;
      gates: { id: string; passed: boolean; attempt: number }[];
      attempts: number;
    }>(status);
    expect(env.status).toBe("ESCALATED");
    const last = env.gates.filter((g) => g.attempt === env.attempts);
    expect(last.find((g) => g.id === "heldout-tests")?.passed).toBe(false);
    // The snapshot with the held-out tests is on this machine, at the path the forger tried, but not in its sandbox.
    const [manifest] = readdirSync(join(workDir, "tasks"));
    const copy = join(workDir, "tasks", manifest ?? "", "heldout/heldout-test/slugify.heldout.test.js");
    expect(readFileSync(copy, "utf8")).toBe(heldout);
    const leak = readFileSync(join(await runTree(workDir, runId, db.url), "src", "leak.txt"), "utf8");
    expect(leak).not.toContain("transliterates letters");
    expect(heldout).toContain("transliterates letters");
  });

  it("a worker killed mid-run, the submitter's folder gone: `loopgate resume` elsewhere writes the snapshot out and finishes the run", async () => {
    const { dir, task } = exampleCopy();
    const sub = await loopgate(["submit", task, "--oracle", "--store", db.url, "--json"]);
    expect(sub.code, show(sub)).toBe(0);
    const { job_id } = parseStdout<{ job_id: string }>(sub);
    renameSync(dir, `${dir}-moved-away`);
    const hostA = tempDir();
    const killed = await loopgate(
      [
        "worker",
        "--store",
        db.url,
        "--once",
        "--lease",
        "2s",
        "--id",
        `snap-${++workers}`,
        "--work-dir",
        hostA,
      ],
      { cwd: hostA, env: { LOOPGATE_FAULT_KILL_AFTER_EVENTS: "8" } },
    );
    expect(killed.signal, show(killed)).toBe("SIGKILL");
    const runId = (await store.queue().list()).find((j) => j.jobId === job_id)?.runId ?? "";
    expect(runId).not.toBe("");
    renameSync(hostA, join(tempDir(), "gone")); // removed with the test's folders, mounts and all
    // (The killed worker's process is gone on this host, so its run lease is taken over at once.)
    const elsewhere = tempDir();
    const resumed = await loopgate(["resume", runId, "--store", db.url, "--json"], { cwd: elsewhere });
    expect(resumed.code, show(resumed)).toBe(0);
    expect(parseStdout<{ status: string }>(resumed).status).toBe("SUCCESS");
    expect(readdirSync(join(elsewhere, ".loopgate", "tasks")).length).toBe(1);
    // The job the killed worker held is claimed again once its lease expires, and just marked finished.
    const drained = await workerElsewhere();
    expect(drained.stderr).toContain(`finished ${job_id}: SUCCESS`);
  });

  it("a worker killed mid-run, its folder and the submitter's gone: another worker elsewhere takes the oracle run over to SUCCESS", async () => {
    const { dir, task } = exampleCopy();
    const sub = await loopgate(["submit", task, "--oracle", "--store", db.url, "--json"]);
    expect(sub.code, show(sub)).toBe(0);
    const { job_id } = parseStdout<{ job_id: string }>(sub);
    renameSync(dir, `${dir}-moved-away`);
    const hostA = tempDir();
    const killed = await loopgate(
      [
        "worker",
        "--store",
        db.url,
        "--once",
        "--lease",
        "2s",
        "--id",
        `snap-${++workers}`,
        "--work-dir",
        hostA,
      ],
      { cwd: hostA, env: { LOOPGATE_FAULT_KILL_AFTER_EVENTS: "8" } },
    );
    expect(killed.signal, show(killed)).toBe("SIGKILL");
    renameSync(hostA, join(tempDir(), "gone")); // removed with the test's folders, mounts and all
    const { stderr } = await workerElsewhere();
    expect(stderr).toContain(`finished ${job_id}: SUCCESS`);
    const row = (await store.queue().list()).find((j) => j.jobId === job_id);
    expect(row).toMatchObject({ state: "finished", status: "SUCCESS", attempts: 2 });
  });

  it("the same task submitted twice is stored once: same snapshot, no new blobs", async () => {
    const { task } = exampleCopy();
    const first = await loopgate(["submit", task, "--noop", "--store", db.url, "--json"]);
    expect(first.code, show(first)).toBe(0);
    const before = await blobCount();
    const second = await loopgate(["submit", task, "--noop", "--store", db.url, "--json"]);
    expect(second.code, show(second)).toBe(0);
    type Sub = { task_snapshot: { manifest: string } };
    expect(parseStdout<Sub>(second).task_snapshot.manifest).toBe(
      parseStdout<Sub>(first).task_snapshot.manifest,
    );
    expect(await blobCount()).toBe(before);
    await workerElsewhere();
  });

  it("a task folder over the size limit is refused naming its size and the limit; nothing is queued or stored", async () => {
    const { dir, task } = exampleCopy();
    const big = join(dir, "repo", "data.bin");
    writeFileSync(big, "");
    truncateSync(big, 101 * 1024 * 1024); // sparse: no disk used, and submit refuses it before reading
    const jobsBefore = (await store.queue().list()).length;
    const blobsBefore = await blobCount();
    const sub = await loopgate(["submit", task, "--oracle", "--store", db.url]);
    expect(sub.code, show(sub)).toBe(2);
    expect(sub.stderr).toMatch(
      /hold 101\.\d MiB \(\d+ bytes\), over the 100\.0 MiB a submitted task may hold/,
    );
    expect(sub.stderr).toContain(task);
    expect((await store.queue().list()).length).toBe(jobsBefore);
    expect(await blobCount()).toBe(blobsBefore);
  });
});
