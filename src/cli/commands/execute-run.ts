import type { Envelope } from "../../core/run/envelope.js";
import type { RunFlags } from "../../runner/host/run-flags.js";
import { type BuilderChoice, isAgentChoice } from "../../runner/run/context/builder-choice.js";
import { runTask } from "../../runner/run/run-task.js";
import type { LoadedTask } from "../../runner/task-source/load-task.js";
import { openStore } from "../output/context.js";
import { interruptRun } from "../output/interrupt.js";
import type { CommandIO } from "../output/io.js";
import { runReporter } from "../output/run-reporter.js";
import { faultInjection } from "./fault-injection.js";
import { judgeModelFor } from "./judge-model.js";
import { runSettings } from "./run-settings.js";

/** Runs one task with one builder and reports; returns the envelope. */
export async function executeRun(
  io: CommandIO,
  loaded: LoadedTask,
  builder: BuilderChoice,
  flags: RunFlags,
  extra: {
    workFrom?: string;
    quiet?: boolean;
    maxAttempts?: number;
    useTaskCheckFloors?: boolean;
    /** `record`: task check's oracle run, which records the lock; default: enforce the lock when valid. */
    identityMode?: "lock" | "record";
    /** A missing or stale lock is an error (default: `--strict`); task check's no-op run is judged by what it has. */
    strictLock?: boolean;
    goal?: { id: string; revision: string };
    /** The run's id (a governed turn's is derived from its identity, so readback can find it). */
    runId?: string;
  } = {},
): Promise<Envelope> {
  const s = runSettings(loaded, flags);
  const store = await openStore(s.store, true);
  // Ctrl-C or a CI cancel: kill the running builder or gate, record the run as interrupted, then exit.
  const interrupts = interruptRun(io);
  const shown = runReporter(io, flags, s.store, extra.quiet);
  try {
    return await runTask({
      ...faultInjection(),
      signal: interrupts.signal,
      loaded,
      builder,
      store,
      localDir: s.localDir,
      sandbox: s.sandbox,
      allowEnv: flags["builder-env"] ?? [],
      mounts: s.mounts,
      ...(flags.network ? { network: true } : {}),
      ...(extra.workFrom ? { workFrom: extra.workFrom } : {}),
      ...((extra.maxAttempts ?? s.maxAttempts) !== undefined
        ? { maxAttempts: extra.maxAttempts ?? s.maxAttempts }
        : {}),
      ...(shown.reporter ? { reporter: shown.reporter } : {}),
      ...(extra.useTaskCheckFloors === false ? { useTaskCheckFloors: false } : {}),
      ...(extra.identityMode ? { identityMode: extra.identityMode } : {}),
      ...((extra.strictLock ?? flags.strict) && extra.identityMode !== "record" ? { strictLock: true } : {}),
      ...(extra.goal ? { goal: extra.goal } : {}),
      ...(extra.runId ? { runId: extra.runId } : {}),
      ...(await judgeModelFor(loaded, flags)),
    });
  } finally {
    // A builder that outlives its attempts (an agent waiting on its Stop hook) never outlives the run.
    if (!isAgentChoice(builder)) await builder.dispose?.().catch(() => undefined);
    shown.close();
    interrupts.dispose();
    await store.close();
  }
}
