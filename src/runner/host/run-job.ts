import { join, resolve } from "node:path";
import { InputError } from "../../core/kernel/errors.js";
import type { Envelope } from "../../core/run/envelope.js";
import { projectEnvelope } from "../../core/run/envelope.js";
import { LeaseHeldError } from "../../core/run/run-lease.js";
import { runPhase } from "../../core/run/run-phase.js";
import type { PostgresEventStore } from "../../store/postgres/postgres-event-store.js";
import type { Claim } from "../../store/postgres/run-queue.js";
import { revisionTree } from "../goal/repo/goal-workspace.js";
import { ensureSandbox } from "../run/phases/prepare-run.js";
import { resumeRun } from "../run/resume-run.js";
import { newRunId, runTask } from "../run/run-task.js";
import { RunJournal } from "../stream/run-journal.js";
import { type LoadedTask, loadTask } from "../task-source/load-task.js";
import { materializeTask, TASK_SNAPSHOT_OPTION } from "../task-source/snapshot-store.js";
import type { JobContext } from "./job-context.js";
import { LocalStartError, startFault, startStep, usableFolder } from "./job-start.js";
import { type RunFlags, runFaults } from "./run-flags.js";

/**
 * The task a job runs: its snapshot in the store, written out under `local` (a job submitted before
 * snapshots: the task file at the path submitted, which must not have changed since).
 */
async function jobTask(
  job: Claim["job"],
  snapshot: string | null,
  store: PostgresEventStore,
  local: string | undefined,
): Promise<LoadedTask> {
  if (snapshot !== null && local !== undefined)
    return materializeTask(store.content(), snapshot, local, job.taskDigest);
  const loaded = loadTask(job.taskPath);
  if (loaded.digest !== job.taskDigest)
    throw new InputError(
      `the task file changed since the job was submitted (digest ${loaded.digest}, submitted ${job.taskDigest})`,
      job.taskPath,
    );
  return loaded;
}

/**
 * Runs the job's task, resumes its run, or reads the verdict of a run that finished already. The run
 * folder is this worker's own (`<its folder>/runs/<run id>`), wherever the run started: a run another
 * machine drove is rebuilt from the store's observations (see runner/run/context/shared-content.ts). The run's
 * lease is as long as the queue's, so both expire together.
 *
 * Until this worker appends the run's next event, nothing is changed: what fails before that for a
 * reason of this machine (its folder, the sandbox self-test, a key it lacks) throws LocalStartError, and
 * the job goes back to the queue; a bad task throws its own error, and the job is finished as refused.
 */
export async function runJob(ctx: JobContext): Promise<Envelope> {
  const { claim, queue, store, url, leaseMs, signal, note: say, workDir, kit } = ctx;
  const { job, token } = claim;
  const { cwd, [TASK_SNAPSHOT_OPTION]: snapshot, ...options } = job.options;
  const flags = { ...options, store: url } as RunFlags;
  // The run folder's root on this machine: --work-dir, else ./.loopgate (the local folder of a PostgreSQL
  // store, as for every command; a task the store holds a snapshot of is written out there too).
  const local = workDir ?? (typeof snapshot === "string" ? ".loopgate" : undefined);
  if (local !== undefined) usableFolder(local);
  const loaded = await startStep(null, () =>
    jobTask(job, typeof snapshot === "string" ? snapshot : null, store, local),
  );
  const s = await startStep(loaded.dir, async () => {
    const settings = kit.settings(loaded, flags);
    const s = local === undefined ? settings : { ...settings, localDir: resolve(local) };
    if (local === undefined) usableFolder(s.localDir);
    // The sandbox is proved here, before the run's first event, so a machine without a working one
    // hands the job back instead of recording a TOOL_FAILURE that another machine would not have.
    await ensureSandbox(s.sandbox);
    return s;
  });
  let runId = job.runId;
  if (runId === null) {
    runId = newRunId();
    if (!(await queue.setRunId(job.jobId, token, runId)))
      throw new Error("lost the job before its run started");
  }
  const runDir = join(s.localDir, "runs", runId);
  const stream = RunJournal.stream(runId);
  for (;;) {
    const events = await store.readStream(stream);
    const finished =
      events.length > 0 && runPhase(events) === "finished" ? projectEnvelope(runId, events) : null;
    if (finished) return finished;
    try {
      if (events[0]?.type !== "run_started")
        return await runTask({
          ...runFaults(ctx.faults),
          runId,
          signal,
          loaded,
          builder: await kit.builder(loaded, flags, typeof cwd === "string" ? cwd : process.cwd()),
          store,
          localDir: s.localDir,
          leaseTtlMs: leaseMs,
          sandbox: s.sandbox,
          allowEnv: flags["builder-env"] ?? [],
          mounts: s.mounts,
          ...(flags.network ? { network: true } : {}),
          ...(s.maxAttempts !== undefined ? { maxAttempts: s.maxAttempts } : {}),
          ...(await kit.judge(loaded, flags)),
        });
      // As `loopgate resume` does (an in-doubt mutating call is rolled back and reported, never re-run).
      return await resumeRun({
        ...runFaults(ctx.faults),
        runId,
        store,
        localDir: s.localDir,
        startingTree: (g) => revisionTree(s.localDir, g.id, g.revision),
        runDir,
        leaseTtlMs: leaseMs,
        allowEnv: flags["builder-env"] ?? [],
        mounts: flags["builder-mount"] ?? [],
        signal,
        builder: kit.recorded(flags, loaded.oracle),
        taskFile: loaded.file,
      });
    } catch (e) {
      if (e instanceof LeaseHeldError && !signal.aborted) {
        // The queue's lease expired but the run's is still live: its holder may be alive (on a host
        // whose process table this worker cannot see), so the run is not taken from it. This worker
        // keeps the claim (heartbeating it) and waits for the run's lease to expire, then tries again.
        const waitMs = Math.min(Math.max(Date.parse(e.lease.expiresAt) - ctx.now(), 0) + 250, leaseMs);
        say(
          `run ${runId} is still leased by process ${e.lease.owner.pid} on ${e.lease.owner.host} until ${e.lease.expiresAt}; waiting ${waitMs} ms for that lease to expire before taking the run over`,
        );
        await ctx.sleep(waitMs, signal);
        if (signal.aborted) throw e;
        continue;
      }
      throw await unstarted(e, events.length, store, stream, loaded.dir);
    }
  }
}

/**
 * The error a failed start ends the job with: a LocalStartError when it failed for this machine before
 * appending any event of its own to the run (the stream is as long as before); else the error itself.
 */
async function unstarted(
  e: unknown,
  before: number,
  store: PostgresEventStore,
  stream: string,
  taskDir: string,
): Promise<unknown> {
  if (startFault(e, taskDir) !== "local") return e;
  const after = (await store.readStream(stream)).length;
  if (after !== before) return e;
  return e instanceof LocalStartError
    ? e
    : new LocalStartError(e instanceof Error ? e.message : String(e), { cause: e });
}
