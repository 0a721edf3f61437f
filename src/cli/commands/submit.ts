import { InputError } from "../../core/kernel/errors.js";
import type { RunFlags } from "../../runner/host/run-flags.js";
import { loadTask } from "../../runner/task-source/load-task.js";
import { snapshotTask, TASK_SNAPSHOT_OPTION } from "../../runner/task-source/snapshot-store.js";
import {
  type JobOptions,
  type PostgresEventStore,
  postgresRoom,
  type StoreLocation,
} from "../../store/open-store.js";
import { storeFrom } from "../output/context.js";
import { oneLine } from "../output/excerpt.js";
import { hintCommand, hintsFor } from "../output/hints.js";
import type { CommandIO } from "../output/io.js";
import { chooseBuilder } from "./choose-builder.js";
import { judgeModelFor } from "./judge-model.js";
import { runSettings } from "./run-settings.js";

/** The `loopgate run` flags a job carries to the worker that runs it. */
export const CARRIED = [
  "builder",
  "oracle",
  "noop",
  "model",
  "builder-env",
  "builder-mount",
  "network",
  "max-attempts",
  "unsafe-no-sandbox",
  "judge-model",
  "max-turns",
  "max-cost",
  "base-url",
  "no-step-checks",
  "step-escalation",
] as const;

/** The Postgres store the store rule gives (a queue needs one database that every worker shares). */
export async function postgresStoreFrom(
  flag: string | undefined,
  command: string,
): Promise<{ where: Extract<StoreLocation, { kind: "postgres" }>; store: PostgresEventStore }> {
  const where = storeFrom(flag);
  if (where.kind !== "postgres")
    throw new InputError(
      `the run queue lives in PostgreSQL: give --store postgres://USER@HOST[:PORT]/DATABASE (or set LOOPGATE_STORE)${
        where.source === "found" && process.env.LOOPGATE_STORE
          ? `; the folder store ${where.dir}, found walking up from here, comes before $LOOPGATE_STORE`
          : ""
      }`,
      command,
    );
  const { PostgresEventStore } = await postgresRoom();
  return { where, store: await PostgresEventStore.open(where.url) };
}

/** `loopgate submit TASK (builder) [run options] --store postgres://…`: enqueues a run; prints the job id. */
export async function submitCommand(io: CommandIO, taskPath: string, flags: RunFlags): Promise<number> {
  const loaded = loadTask(taskPath);
  // The same checks as `loopgate run`, here, so a bad job is refused at once rather than by a worker.
  await chooseBuilder(loaded, flags);
  runSettings(loaded, flags);
  await judgeModelFor(loaded, flags);
  const options: JobOptions = { cwd: process.cwd() };
  for (const name of CARRIED) {
    const v = flags[name];
    if (v !== undefined) options[name] = v;
  }
  const { where, store } = await postgresStoreFrom(flags.store, "loopgate submit");
  try {
    // The task folder and everything the task names go into the store, so a worker needs no copy of it.
    const snapshot = await snapshotTask(loaded, store.content());
    options[TASK_SNAPSHOT_OPTION] = snapshot.manifest;
    const job = await store.queue().submit({ taskPath: loaded.file, taskDigest: loaded.digest, options });
    if (flags.json)
      io.out(
        `${JSON.stringify(
          {
            job_id: job.jobId,
            task_path: job.taskPath,
            task_digest: job.taskDigest,
            task_snapshot: { manifest: snapshot.manifest, files: snapshot.files, bytes: snapshot.bytes },
            state: job.state,
            store: where.label,
          },
          null,
          2,
        )}\n`,
      );
    else io.out(`${job.jobId}\n`);
    return 0;
  } finally {
    await store.close();
  }
}

/**
 * `loopgate workers --store postgres://…`: live workers and the jobs they hold, then the unfinished queue.
 * A worker whose heartbeat is overdue is marked stale: it may be dead although its presence and its
 * jobs' leases have not run out yet.
 */
export async function workersCommand(
  io: CommandIO,
  flags: { store?: string; json?: boolean },
): Promise<number> {
  const { where, store } = await postgresStoreFrom(flags.store, "loopgate workers");
  const { jobView, workerStale } = await postgresRoom();
  try {
    const queue = store.queue();
    const [found, jobs, now] = await Promise.all([
      queue.liveWorkers(),
      queue.list({ unfinished: true }),
      queue.now(),
    ]);
    const live = found.map((l) => ({ ...l, stale: workerStale(l.worker, now) }));
    if (flags.json) {
      io.out(`${JSON.stringify({ workers: live, unfinished: jobs }, null, 2)}\n`);
      return 0;
    }
    if (live.length === 0) io.out("no live workers\n");
    for (const { worker: w, holds, stale } of live) {
      const overdue = stale
        ? `  STALE: heartbeat overdue (last ${w.seenAt ?? "?"}, due every ${w.beatMs ?? "?"} ms)`
        : "";
      io.out(
        `${oneLine(w.workerId)}  pid ${w.pid} on ${oneLine(w.host)}  concurrency ${w.concurrency}  seen until ${w.seenUntil}${overdue}\n`,
      );
      for (const j of holds)
        io.out(
          `  holds ${j.jobId}  ${jobView(j, now)}  run ${j.runId ?? "(not started)"}  lease until ${j.lockedUntil}  ${j.taskPath}\n`,
        );
    }
    const queued = jobs.filter((j) => j.state === "queued").length;
    const expired = jobs.filter((j) => jobView(j, now) === "expired").length;
    const back = jobs.filter((j) => j.handedBack !== null).length;
    io.out(
      `queue: ${queued} queued, ${jobs.length - queued} claimed (${expired} with an expired lease)${back ? `; ${back} handed back by a worker that could not start them (\`${hintCommand(hintsFor(where), "runs")}\` says why)` : ""}\n`,
    );
    return 0;
  } finally {
    await store.close();
  }
}
