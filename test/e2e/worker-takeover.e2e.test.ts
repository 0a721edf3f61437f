// Takeover across machines, simulated: worker A keeps its run folders in folder A (--work-dir), is SIGKILLed mid-run, and folder A is
// deleted; worker B, in folder B, shares nothing with A but the database. B rebuilds the run folder from
// the observations and blobs the store holds and resumes the run as `loopgate resume` does.
import { randomUUID } from "node:crypto";
import { cpSync, existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LoopgateEvent } from "../../src/core/events/loopgate-event.js";
import { PostgresEventStore } from "../../src/store/postgres/postgres-event-store.js";
import { removeTreeSync } from "../../src/workspace/remove-tree.js";
import { type FreshDatabase, freshDatabase } from "../support/postgres.js";
import { exampleDir, loopgate, parseStdout, removeTemps, show, tempDir, withoutCanaryNames } from "./cli.js";

type Ev = { type: string; data: Record<string, unknown> };

let db: FreshDatabase;
let store: PostgresEventStore;
let task: string;
let script: string;
let reference: Record<string, unknown>;
beforeAll(async () => {
  db = await freshDatabase();
  store = await PostgresEventStore.open(db.url);
  const dir = join(tempDir(), "js-slugify");
  cpSync(exampleDir("js-slugify"), dir, { recursive: true });
  task = join(dir, "task.yaml");
  script = `scripted:${join(dir, "agent/honest.yaml")}`;
  const ref = await loopgate(["run", task, "--model", script, "--store", db.url, "--json"], {
    cwd: tempDir(),
  });
  expect(ref.code, show(ref)).toBe(0);
  reference = parseStdout(ref);
}, 120_000);
afterAll(async () => {
  removeTemps();
  await store?.close();
  await db?.drop();
});

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

async function eventsOf(runId: string): Promise<Ev[]> {
  return (await store.readStream(`run-${runId}`)) as unknown as Ev[];
}

// A SIGKILLed worker's registration stays live until its lease expires, and a live id cannot be taken:
// each worker process of this file gets its own id, so a test never waits on the previous test's worker.
let workers = 0;
const workerId = (host: string) => `${host}-${++workers}`;

/** Submits a job, lets worker A (folder A) die after `killAfter` run events, deletes folder A. */
async function killedOnHostA(killAfter: number): Promise<{ jobId: string; runId: string; hostB: string }> {
  const sub = await loopgate(["submit", task, "--model", script, "--store", db.url, "--json"]);
  expect(sub.code, show(sub)).toBe(0);
  const { job_id: jobId } = parseStdout<{ job_id: string }>(sub);
  const hostA = tempDir();
  const killed = await loopgate(
    ["worker", "--store", db.url, "--once", "--lease", "2s", "--id", workerId("host-a"), "--work-dir", hostA],
    {
      cwd: hostA,
      env: { LOOPGATE_FAULT_KILL_AFTER_EVENTS: String(killAfter) },
    },
  );
  expect(killed.signal, show(killed)).toBe("SIGKILL");
  const job = (await store.queue().list()).find((j) => j.jobId === jobId);
  const runId = job?.runId ?? "";
  expect(runId).not.toBe("");
  const runDir = (await eventsOf(runId))[0]?.data.run_dir as string;
  expect(runDir.startsWith(hostA)).toBe(true);
  expect(existsSync(runDir)).toBe(true);
  // The machine is gone, and its mounts with it.
  removeTreeSync(hostA);
  return { jobId, runId, hostB: tempDir() };
}

/** Worker B, in its own folder, until the queue is empty. */
async function workerOnHostB(hostB: string) {
  return loopgate(
    [
      "worker",
      "--store",
      db.url,
      "--until-idle",
      "--lease",
      "2s",
      "--id",
      workerId("host-b"),
      "--work-dir",
      hostB,
    ],
    {
      cwd: hostB,
    },
  );
}

describe.sequential("worker takeover on another machine", () => {
  // 16: after write_file's change was observed (mid-attempt, built-in agent); 25: after the attempt's
  // after-builder observation, before its gates (the run continues from the log).
  for (const killAfter of [16, 25]) {
    it(`killed after event ${killAfter}: B rebuilds the run folder from the store and ends as an uninterrupted run`, async () => {
      const { jobId, runId, hostB } = await killedOnHostA(killAfter);
      // Everything a resume needs is in the store: every observation the log names, and its blobs.
      const ids = [
        ...new Set(
          (await eventsOf(runId))
            .map((e) => e.data.observation_id)
            .filter((id): id is string => typeof id === "string"),
        ),
      ];
      expect(ids.length).toBeGreaterThanOrEqual(2);
      const content = store.content();
      for (const id of ids) {
        const body = JSON.parse(await content.getObservation(id)) as {
          entries: { type: string; hash: string }[];
        };
        const hashes = body.entries.filter((e) => e.type === "file").map((e) => e.hash);
        expect(await content.missingBlobs(hashes)).toEqual([]);
      }

      const b = await workerOnHostB(hostB);
      expect(b.code, show(b)).toBe(0);
      expect(b.stderr).toContain(`claimed ${jobId} (attempt 2, run ${runId})`);
      expect(b.stderr).toContain(`finished ${jobId}: SUCCESS`);
      const events = await eventsOf(runId);
      const resumed = events.filter((e) => e.type === "run_resumed");
      expect(resumed).toHaveLength(1);
      expect(String(resumed[0]?.data.action)).toContain(
        `rebuilt the run folder ${join(hostB, "runs", runId)}`,
      );
      expect(existsSync(join(hostB, "runs", runId, "workspace/src/slugify.js"))).toBe(true);
      const status = await loopgate(["status", runId, "--store", db.url, "--json"]);
      expect(comparable(parseStdout(status))).toEqual(comparable(reference));
      const job = (await store.queue().list()).find((j) => j.jobId === jobId);
      expect(job).toMatchObject({ state: "finished", status: "SUCCESS", attempts: 2 });
    });
  }

  it("a run lease still live on another host is not taken: B waits for it to expire, says so, then takes over", async () => {
    const { jobId, runId, hostB } = await killedOnHostA(16);
    // As if A ran on another machine and renewed the run's lease just before it died: B cannot see that
    // host's processes, so only the lease's expiry frees the run.
    const held = await eventsOf(runId);
    // Long enough that B, however loaded the machine, starts and claims the job while the lease is live.
    const expires = new Date(Date.now() + 20_000).toISOString();
    await store.append(
      `run-${runId}`,
      [
        {
          id: randomUUID(),
          type: "run_lease_taken",
          data: {
            owner: { pid: 1, host: "host-a.elsewhere", token: "a".repeat(32) },
            expires_at: expires,
            previous: null,
          },
          meta: { at: new Date().toISOString(), origin: "runtime" },
        } as LoopgateEvent,
      ],
      held.length - 1,
    );
    const b = await workerOnHostB(hostB);
    expect(b.code, show(b)).toBe(0);
    expect(b.stderr).toContain(
      `run ${runId} is still leased by process 1 on host-a.elsewhere until ${expires}`,
    );
    expect(b.stderr).toContain(`finished ${jobId}: SUCCESS`);
    const taken = (await eventsOf(runId)).filter((e) => e.type === "run_lease_taken").at(-1);
    expect(taken?.data.previous).toMatchObject({
      host: "host-a.elsewhere",
      expires_at: expires,
      reason: "expired",
    });
    // "expired": when B took the lease, the foreign one had run out (by B's clock), not been overridden.
    const status = await loopgate(["status", runId, "--store", db.url, "--json"]);
    expect(comparable(parseStdout(status))).toEqual(comparable(reference));
  });

  it("a mutating call in doubt on A is rolled back on B and reported to the model, never re-run", async () => {
    const { runId, hostB } = await killedOnHostA(14);
    const before = await eventsOf(runId);
    const inDoubt = before.at(-1);
    expect(inDoubt?.type === "tool_call_started" && inDoubt.data.name).toBe("write_file");
    const b = await workerOnHostB(hostB);
    expect(b.code, show(b)).toBe(0);
    const events = await eventsOf(runId);
    const abandoned = events.filter((e) => e.type === "tool_call_abandoned");
    expect(abandoned.map((e) => e.data.call_id)).toEqual([inDoubt?.data.call_id]);
    expect(
      events.some((e) => e.type === "tool_call_finished" && e.data.call_id === inDoubt?.data.call_id),
    ).toBe(false);
    const action = String(events.find((e) => e.type === "run_resumed")?.data.action);
    expect(action).toContain("rebuilt the run folder");
    expect(action).toContain("rolled the workspace back");
    // The scripted model does not repeat the write, so B's workspace still holds the pristine file.
    const pristine = readFileSync(join(exampleDir("js-slugify"), "repo/src/slugify.js"), "utf8");
    expect(readFileSync(join(hostB, "runs", runId, "workspace/src/slugify.js"), "utf8")).toBe(pristine);
  });
});
