import { hostname } from "node:os";
import { parseDuration } from "../../core/kernel/duration.js";
import { InputError } from "../../core/kernel/errors.js";
import { createWorker, type WorkerEvent, type WorkerOptions } from "../../runner/host/worker-host.js";
import { QUEUE_POLICY, type QueuePolicy, WAKE_POLICY, type WakePolicy } from "../../store/open-store.js";
import type { CommandIO } from "../output/io.js";
import { hostFaults, runKit } from "./host-kit.js";
import { postgresStoreFrom } from "./submit.js";

export interface WorkerFlags {
  store?: string;
  json?: boolean;
  concurrency?: number;
  id?: string;
  once?: boolean;
  "until-idle"?: boolean;
  lease?: string;
  "work-dir"?: string;
}

/** The worker's options that come from its flags alone (checked here, once; the store is opened after). */
export type WorkerFlagOptions = Pick<
  WorkerOptions,
  "concurrency" | "id" | "once" | "untilIdle" | "leaseMs" | "workDir"
>;

/** Parses `loopgate worker`'s flags into the worker's options; bad input throws InputError naming the flag. */
export function workerOptionsFrom(flags: WorkerFlags): WorkerFlagOptions {
  if (flags.once && flags["until-idle"])
    throw new InputError("give --once or --until-idle, not both", "loopgate worker");
  const leaseMs = flags.lease === undefined ? 30_000 : parseDuration(flags.lease);
  if (leaseMs === null || leaseMs < 1000)
    throw new InputError(
      `expected a duration of at least 1s (e.g. 30s, 2m), got ${JSON.stringify(flags.lease)}`,
      "--lease",
    );
  const id = flags.id ?? `${hostname()}-${process.pid}`;
  if (!/^[A-Za-z0-9._@-]{1,100}$/.test(id))
    throw new InputError(
      `a worker id is 1 to 100 letters, digits, '.', '_', '@' or '-', got ${JSON.stringify(id)}`,
      "--id",
    );
  return {
    concurrency: flags.concurrency ?? 1,
    id,
    once: flags.once === true,
    untilIdle: flags["until-idle"] === true,
    leaseMs,
    workDir: flags["work-dir"],
  };
}

/** A worker event as the line `loopgate worker` writes to stderr (after its `loopgate worker ID: ` prefix). */
export function workerLine(e: WorkerEvent): string {
  switch (e.kind) {
    case "claiming":
      return `claiming from ${e.label} (concurrency ${e.concurrency}, lease ${e.leaseMs} ms)`;
    case "listener_lost":
      return `lost the notification connection (${e.error}); polling every ${e.pollMs} ms until it is back`;
    case "listener_back":
      return "notification connection back";
    case "draining":
      return `SIGTERM: claiming nothing more, finishing the ${e.held} run(s) held (SIGTERM again hands them back)`;
    case "handing_back":
      return "SIGTERM again: interrupting the held runs and handing them back";
    case "claimed":
      return `claimed ${e.jobId} (attempt ${e.attempt}${e.runId ? `, run ${e.runId}` : ""})`;
    case "finished":
      return `finished ${e.jobId}: ${e.status}`;
    case "handed_back":
      return `handed ${e.jobId} back to the queue`;
    case "local_failure":
      return `could not start ${e.jobId} on this machine (${e.inRow} in a row): ${e.reason}; handed it back to the queue`;
    case "dead_letter":
      return `finished ${e.jobId} as TOOL_FAILURE without claiming it (dead letter): ${e.reason}`;
    case "gave_up":
      return `gave up ${e.jobId}: ${e.why}`;
    case "note":
      return e.line;
    case "warning":
      return `warning: ${e.text}`;
  }
}

/**
 * `loopgate worker --store postgres://…`: the worker of runner/host/worker-host.ts over the store's queue.
 * SIGTERM (or SIGINT) is its stop request: the first drains, the second hands the held jobs back.
 * Exit 0 when it stopped, 1 when it lost the database or could not start jobs on this machine.
 */
export async function workerCommand(
  io: CommandIO,
  flags: WorkerFlags,
  policy: QueuePolicy = QUEUE_POLICY,
  wakePolicy: WakePolicy = WAKE_POLICY,
): Promise<number> {
  const options = workerOptionsFrom(flags);
  const { where, store } = await postgresStoreFrom(flags.store, "loopgate worker");
  const say = (line: string) => io.err(`loopgate worker ${options.id}: ${line}\n`);
  const worker = createWorker({
    ...options,
    store,
    url: where.url,
    label: where.label,
    policy,
    wakePolicy,
    kit: runKit(),
    faults: hostFaults(),
    onEvent: (e) => (e.kind === "warning" ? io.err(`warning: ${e.text}\n`) : say(workerLine(e))),
  });
  const onStop = () => worker.stop();
  process.on("SIGTERM", onStop);
  process.on("SIGINT", onStop);
  let result: Awaited<ReturnType<typeof worker.run>>;
  try {
    result = await worker.run();
  } finally {
    process.off("SIGTERM", onStop);
    process.off("SIGINT", onStop);
    await store.close().catch(() => {});
  }
  if (result.state === "failed" && result.reason === "lost_database") {
    say(
      `${result.message}; stopping (what was committed stays; a held job is claimed again when its lease expires)`,
    );
    return 1;
  }
  if (result.state === "failed") {
    say(`${result.message}; stopping (the jobs are back in the queue, unclaimed, for another worker)`);
    if (flags.json)
      io.out(`${JSON.stringify({ worker_id: options.id, stopped: true, error: result.message })}\n`);
    return 1;
  }
  if (flags.json) io.out(`${JSON.stringify({ worker_id: options.id, stopped: true })}\n`);
  return 0;
}
